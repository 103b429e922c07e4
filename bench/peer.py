"""The benchmarked policy network and PPO train step in PyTorch CPU eager, for `npm run bench:peer`.

Reads one JSON line per request on stdin and answers one JSON line on stdout:
  {"spec": {...}}                       builds the network (bench/nn-graphs.ts POLICY_SPEC + batch)
  {"threads": 1, "steps": 5}            times `steps` train steps at that thread count (after one warm-up)
torch is not a dependency of wmrl: bench/peer.ts starts this script only when `python3 -c "import torch"`
works. The allocator setting (glibc mmap/trim thresholds) comes from the environment bench/peer.ts gives.
"""

import json
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Policy(nn.Module):
    """Same layers as src/policy/vla.ts with the bench's config: conv encoder, masked-mean text, proprio
    MLP, a LayerNorm trunk, one categorical head per action dimension."""

    def __init__(self, s):
        super().__init__()
        convs, cin, size = [], 3, s["image"]
        for layer in s["conv"]:
            convs.append(nn.Conv2d(cin, layer["out"], layer["k"], layer["stride"], layer["pad"]))
            cin = layer["out"]
            size = (size + 2 * layer["pad"] - layer["k"]) // layer["stride"] + 1
        self.convs = nn.ModuleList(convs)
        self.img_fc = nn.Linear(cin * size * size, s["imageFeatures"])
        self.embed = nn.Embedding(s["vocab"], s["embedDim"])
        self.text_fc = nn.Linear(s["embedDim"], s["embedDim"])
        self.proprio_fc = nn.Linear(s["proprioDim"], s["proprioHidden"])
        width = s["imageFeatures"] + s["embedDim"] + s["proprioHidden"]
        self.trunk = nn.Linear(width, s["trunk"])
        self.ln = nn.LayerNorm(s["trunk"])
        self.heads = nn.ModuleList(nn.Linear(s["trunk"], n) for n in s["heads"])

    def forward(self, image, tokens, proprio):
        x = (image.permute(0, 3, 1, 2).float() - 128) / 255
        for conv in self.convs:
            x = F.relu(conv(x))
        img = F.relu(self.img_fc(x.flatten(1)))
        mask = (tokens != 0).float()
        pooled = (self.embed(tokens) * (mask / mask.sum(1, keepdim=True).clamp(min=1))[..., None]).sum(1)
        text = F.relu(self.text_fc(pooled))
        prop = F.relu(self.proprio_fc(proprio))
        h = F.relu(self.ln(self.trunk(torch.cat([img, text, prop], 1))))
        return [F.log_softmax(head(h), -1) for head in self.heads]


def ppo_loss(net, b):
    """bench/nn-graphs.ts ppoLoss: clipped surrogate, entropy bonus 0.01."""
    logps = net(b["image"], b["tokens"], b["proprio"])
    logp = sum(lp.gather(1, a[:, None]).squeeze(1) for lp, a in zip(logps, b["actions"]))
    entropy = sum(-(lp.exp() * lp).sum(1) for lp in logps)
    ratio = (logp - b["old_logp"]).exp()
    surr = torch.min(ratio * b["adv"], ratio.clamp(0.8, 1.2) * b["adv"])
    return -surr.mean() - 0.01 * entropy.mean()


def build(s):
    torch.manual_seed(0)
    net = Policy(s)
    if s.get("channelsLast"):
        net = net.to(memory_format=torch.channels_last)
    n = s["batch"]
    g = torch.Generator().manual_seed(1)
    batch = {
        "image": torch.randint(0, 256, (n, s["image"], s["image"], 3), dtype=torch.uint8, generator=g),
        "tokens": torch.randint(1, s["vocab"], (n, s["maxLength"]), generator=g),
        "proprio": torch.rand(n, s["proprioDim"], generator=g) * 2 - 1,
        "actions": [torch.randint(0, k, (n,), generator=g) for k in s["heads"]],
        "adv": torch.randn(n, generator=g),
        "old_logp": -9 + 0.1 * torch.randn(n, generator=g),
    }
    opt = torch.optim.AdamW(net.parameters(), lr=1e-5, weight_decay=0.0)

    def step():
        opt.zero_grad(set_to_none=True)
        ppo_loss(net, batch).backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 0.5)
        opt.step()

    params = sum(p.numel() for p in net.parameters())
    return step, params


def main():
    step, params = None, 0
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
