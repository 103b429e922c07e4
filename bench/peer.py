"""The shipped policy network and its train step in PyTorch CPU eager, for `npm run bench:peer`.

Reads one JSON line per request on stdin and answers one JSON line on stdout:
  {"spec": {"config": ..., "batch": 256, "tokens": [...], "channelsLast": false}}
      builds the network of a VLA config (src/policy/vla.ts, parsed: defaults filled in) and a random batch
      whose every row has the instruction `tokens`; answers the parameter count and torch's version
  {"threads": 1, "steps": 5}            times `steps` train steps at that thread count (after one warm-up)
The step is bench/nn-graphs.ts policyTrainer's: ppoLoss, global grad-norm clip 0.5, AdamW (lr 1e-5, no
decay). torch is not a dependency of wmrl: bench/peer.ts starts this script with a python that imports
torch. The allocator setting (glibc mmap/trim thresholds) comes from the environment bench/peer.ts gives.
"""

import json
import math
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

ACTS = {"relu": F.relu, "silu": F.silu, "tanh": torch.tanh}


def side(n, layers):
    for l in layers:
        n = (n + 2 * l["pad"] - l["k"]) // l["stride"] + 1
    return n


class Encoder(nn.Module):
    """One camera's encoder (vla.ts encodeImage): convs, FiLM on the last `film` layers (x * (1 + gamma) +
    beta before the activation), flattened map and/or spatial-softmax keypoints of the last map, image fc."""

    def __init__(self, c, layers, film_in):
        super().__init__()
        self.act = ACTS[c["act"]]
        convs, cin = [], 3
        for l in layers:
            convs.append(nn.Conv2d(cin, l["out"], l["k"], l["stride"], l["pad"]))
            cin = l["out"]
        self.convs = nn.ModuleList(convs)
        self.first_film = len(layers) - c.get("film", 0)
        self.films = nn.ModuleList(nn.Linear(film_in, 2 * l["out"]) for l in layers[self.first_film :])
        h, w = side(c["imageSize"][0], layers), side(c["imageSize"][1], layers)
        self.kp = c.get("keypoints", "off")
        # (x, y) in [-1, 1] per position of the h x w map, row-major (vla.ts spatialSoftmax)
        xs = torch.linspace(-1, 1, w) if w > 1 else torch.zeros(1)
        ys = torch.linspace(-1, 1, h) if h > 1 else torch.zeros(1)
        self.register_buffer("coords", torch.stack([xs.repeat(h), ys.repeat_interleave(w)], 1))
        width = (0 if self.kp == "replace" else cin * h * w) + (0 if self.kp == "off" else 2 * cin)
        self.fc = nn.Linear(width, c["imageFeatures"])

    def forward(self, image, film_text):
        x = (image.permute(0, 3, 1, 2).float() - 128) / 255
        for i, conv in enumerate(self.convs):
            pre = conv(x)
            if film_text is not None and i >= self.first_film:
                gamma, beta = self.films[i - self.first_film](film_text(i - self.first_film)).chunk(2, 1)
                pre = pre * (1 + gamma[:, :, None, None]) + beta[:, :, None, None]
            x = self.act(pre)
        parts = []
        if self.kp != "replace":
            parts.append(x.flatten(1))
        if self.kp != "off":
            parts.append((F.softmax(pre.flatten(2), -1) @ self.coords).flatten(1))
        return self.act(self.fc(torch.cat(parts, 1) if len(parts) > 1 else parts[0]))


class Text(nn.Module):
    """The instruction (vla.ts encodeText / encodeRoles): word embeddings pooled by masked mean, one learned
    query, or role pooling (position embeddings, K queries, a masked softmax each), then the text fc."""

    def __init__(self, c):
        super().__init__()
        d, n = c["embedDim"], c["tokenizer"]["maxLength"]
        self.act, self.pooling, self.d = ACTS[c["act"]], c.get("pooling", "mean"), d
        self.embed = nn.Embedding(len(c["tokenizer"]["vocab"]), d)
        if self.pooling == "attention":
            self.query = nn.Parameter(torch.randn(d, 1) / math.sqrt(d))
        if self.pooling == "roles":
            roles = c.get("roles") or {}
            self.k, self.split = roles.get("queries", 2), roles.get("film", "concat") == "split"
            self.pos = nn.Parameter(torch.randn(n, d) / math.sqrt(d))
            self.queries = nn.Parameter(torch.randn(d, self.k) / math.sqrt(d))
        self.fc = nn.Linear(d, d)

    def width(self):
        """(the trunk's text width, what a FiLM generator reads)"""
        if self.pooling != "roles":
            return self.d, self.d
        return self.k * self.d, self.d if self.split else self.k * self.d

    def forward(self, tokens):
        """(the trunk's text feature, j -> what FiLM layer j reads)"""
        x, pad = self.embed(tokens), ((tokens != 0).float() - 1) * 1e9
        if self.pooling == "roles":
            x = x + self.pos
            w = F.softmax((x @ self.queries).transpose(1, 2) / math.sqrt(self.d) + pad[:, None], -1)
            roles = self.act(self.fc(w @ x))  # [N, K, D]
            both = roles.flatten(1)
            return both, (lambda j: roles[:, j % self.k]) if self.split else (lambda j: both)
        if self.pooling == "mean":
            mask = (tokens != 0).float()
            w = mask / mask.sum(1, keepdim=True).clamp(min=1)
        else:
            w = F.softmax((x @ self.query).squeeze(-1) / math.sqrt(self.d) + pad, -1)
        text = self.act(self.fc((w[:, None] @ x).squeeze(1)))
        return text, lambda j: text


class Policy(nn.Module):
    """src/policy/vla.ts vlaNet with independent heads: an encoder per camera (the second camera's own
    `secondConv` one, or the first's), the instruction, proprio MLP, LayerNorm trunk, one head per action."""

    def __init__(self, c):
        super().__init__()
        self.act, self.film = ACTS[c["act"]], c.get("film", 0) > 0
        self.text = Text(c)
        text_width, film_in = self.text.width()
        encoders = [Encoder(c, c["conv"], film_in)] if c["cameras"] else []
        if len(c["cameras"]) > 1 and c.get("secondConv"):
            encoders.append(Encoder(c, c["secondConv"], film_in))
        self.encoders = nn.ModuleList(encoders)
        self.cam_encoder = [min(i, len(encoders) - 1) for i in range(len(c["cameras"]))]
        width = len(c["cameras"]) * c.get("imageFeatures", 0) + text_width
        self.proprio = None
        if c.get("proprio"):
            self.proprio = nn.Linear(c["proprio"]["dim"], c["proprio"]["hidden"])
            width += c["proprio"]["hidden"]
        self.trunk, self.norms = nn.ModuleList(), nn.ModuleList()
        for out in c["trunk"]:
            self.trunk.append(nn.Linear(width, out))
            self.norms.append(nn.LayerNorm(out) if c["layerNorm"] else nn.Identity())
            width = out
        self.heads = nn.ModuleList(nn.Linear(width, a["n"]) for a in c["actions"])

    def forward(self, images, tokens, proprio):
        text, film_text = self.text(tokens)
        feats = [self.encoders[e](img, film_text if self.film else None) for e, img in zip(self.cam_encoder, images)]
        feats.append(text)
        if self.proprio is not None:
            feats.append(self.act(self.proprio(proprio)))
        h = torch.cat(feats, 1)
        for fc, norm in zip(self.trunk, self.norms):
            h = self.act(norm(fc(h)))
        return [F.log_softmax(head(h), -1) for head in self.heads]


def ppo_loss(net, b):
    """bench/nn-graphs.ts ppoLoss: clipped surrogate (0.8..1.2), entropy bonus 0.01."""
    logps = net(b["images"], b["tokens"], b["proprio"])
    logp = sum(lp.gather(1, a[:, None]).squeeze(1) for lp, a in zip(logps, b["actions"]))
    entropy = sum(-(lp.exp() * lp).sum(1) for lp in logps)
    ratio = (logp - b["old_logp"]).exp()
    surr = torch.min(ratio * b["adv"], ratio.clamp(0.8, 1.2) * b["adv"])
    return -surr.mean() - 0.01 * entropy.mean()


def build(s):
    c, n = s["config"], s["batch"]
    torch.manual_seed(0)
    net = Policy(c)
    if s.get("channelsLast"):
        net = net.to(memory_format=torch.channels_last)
    g = torch.Generator().manual_seed(1)
    h, w = c["imageSize"]
    batch = {
        "images": [torch.randint(0, 256, (n, h, w, 3), dtype=torch.uint8, generator=g) for _ in c["cameras"]],
        "tokens": torch.tensor(s["tokens"], dtype=torch.long).repeat(n, 1),
        "proprio": torch.rand(n, c["proprio"]["dim"], generator=g) * 2 - 1 if c.get("proprio") else None,
        "actions": [torch.randint(0, a["n"], (n,), generator=g) for a in c["actions"]],
        "adv": torch.randn(n, generator=g),
        "old_logp": -9 + 0.1 * torch.randn(n, generator=g),
    }
    opt = torch.optim.AdamW(net.parameters(), lr=1e-5, weight_decay=0.0)

    def step():
        opt.zero_grad(set_to_none=True)
        ppo_loss(net, batch).backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 0.5)
        opt.step()

    return step, sum(p.numel() for p in net.parameters())


def main():
    step = None
    for line in sys.stdin:
        req = json.loads(line)
        if "spec" in req:
            step, params = build(req["spec"])
            out = {"params": params, "torch": torch.__version__}
        else:
            torch.set_num_threads(req["threads"])
            step()
            times = []
            for _ in range(req["steps"]):
                t0 = time.perf_counter()
                step()
                times.append((time.perf_counter() - t0) * 1000)
            out = {"ms": sorted(times)[len(times) // 2], "threads": req["threads"]}
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
