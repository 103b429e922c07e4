import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/core/errors.ts';
import { sha256Hex } from '../../src/core/sha256.ts';
import type { ModelBytes } from '../../src/nn/model-bytes.ts';
import { loadPolicy } from '../../src/policy/model.ts';
import { policyFromBytes } from '../../src/policy/model-bytes.ts';
import { loadWmModel } from '../../src/worldmodel/model-file.ts';
import { wmModelFromBytes } from '../../src/worldmodel/model-bytes.ts';

const MODELS = resolve(import.meta.dirname, '../../models');
const bytesOf = (stem: string, parts: string[] = []): ModelBytes => ({
  name: join(MODELS, `${stem}.onnx`),
  onnx: new Uint8Array(readFileSync(join(MODELS, `${stem}.onnx`))),
  sidecar: readFileSync(join(MODELS, `${stem}.json`), 'utf8'),
  parts: Object.fromEntries(parts.map((p) => [p, new Uint8Array(readFileSync(join(MODELS, p)))])),
});

describe('models from bytes (browser-safe loaders; the file loaders call them)', () => {
  it('sha256Hex matches node:crypto at every padding boundary', () => {
    for (const n of [0, 1, 55, 56, 63, 64, 65, 119, 120, 1000, 70_001]) {
      const b = Uint8Array.from({ length: n }, (_, i) => (i * 131 + 7) & 255);
      expect(sha256Hex(b)).toBe(createHash('sha256').update(b).digest('hex'));
    }
    expect(sha256Hex('grey bin é')).toBe(createHash('sha256').update('grey bin é').digest('hex'));
  });

  it('bytes give the model the files give: same config, parameters bit for bit, same metadata', async () => {
    const file = await loadPolicy(join(MODELS, 'vla-base.onnx'));
    const mem = policyFromBytes(bytesOf('vla-base'));
    expect(mem.config).toEqual(file.config);
    expect(mem.params.names).toEqual(file.params.names);
    for (const n of file.params.names)
      expect(Buffer.from(mem.params.get(n).buffer)).toEqual(Buffer.from(file.params.get(n).buffer));
    const wm = wmModelFromBytes(bytesOf('wm-base', ['wm-base.wm.json']));
    const wmFile = await loadWmModel(join(MODELS, 'wm-base.onnx'));
    expect(wm.meta).toEqual(wmFile.meta);
    expect(wm.netConfig).toEqual(wmFile.netConfig);
  });

  it('refuses edited bytes, a missing part, a wrong kind and bad sidecar JSON, naming the file', () => {
    const good = bytesOf('wm-base', ['wm-base.wm.json']);
    const onnx = good.onnx.slice();
    onnx[onnx.length - 1] ^= 1;
    expect(() => wmModelFromBytes({ ...good, onnx })).toThrow(
      `${good.name}: does not match onnxHash in ${join(MODELS, 'wm-base.json')}`,
    );
    const part = good.parts!['wm-base.wm.json'].slice();
    part[10] ^= 1;
    expect(() => wmModelFromBytes({ ...good, parts: { 'wm-base.wm.json': part } })).toThrow(
      `${join(MODELS, 'wm-base.wm.json')}: does not match parts["wm-base.wm.json"]`,
    );
    expect(() => wmModelFromBytes({ ...good, parts: {} })).toThrow(
      `${join(MODELS, 'wm-base.wm.json')}: model part listed in ${join(MODELS, 'wm-base.json')} is missing`,
    );
    expect(() => policyFromBytes(good)).toThrow(/kind: holds a "worldmodel" model, expected "vla-policy"/);
    expect(() => policyFromBytes({ ...bytesOf('vla-base'), sidecar: '{"format": ' })).toThrow(InputError);
    expect(() => policyFromBytes({ ...bytesOf('vla-base'), sidecar: '{"format": ' })).toThrow(
      /vla-base\.json: model sidecar is not valid JSON/,
    );
    expect(() => policyFromBytes({ ...bytesOf('vla-base'), sidecar: '{}' })).toThrow(/vla-base\.json: \$\.format: /);
  });
});
