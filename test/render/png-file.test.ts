import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PNG } from 'pngjs';
import { afterAll, describe, expect, it } from 'vitest';
import { encodePng, writePng } from '../../src/render/png-file.ts';
import { Rng } from '../../src/core/rng.ts';

function randomImage(width: number, height: number, seed: number): Uint8Array {
  const rng = new Rng(seed);
  const img = new Uint8Array(width * height * 3);
  for (let i = 0; i < img.length; i++) img[i] = rng.int(256);
  return img;
}

const dir = mkdtempSync(join(tmpdir(), 'wmrl-png-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('encodePng', () => {
  it('round-trips pixels through pngjs', () => {
    const img = randomImage(7, 5, 1);
    const decoded = PNG.sync.read(encodePng(img, 7, 5));
    expect([decoded.width, decoded.height]).toEqual([7, 5]);
    for (let i = 0; i < 35; i++) {
      expect([...decoded.data.subarray(4 * i, 4 * i + 4)]).toEqual([img[3 * i], img[3 * i + 1], img[3 * i + 2], 255]);
    }
  });

  it('upscales with nearest neighbour', () => {
    const img = randomImage(3, 2, 2);
    const s = 4;
    const decoded = PNG.sync.read(encodePng(img, 3, 2, s));
    expect([decoded.width, decoded.height]).toEqual([12, 8]);
    for (let y = 0; y < 8; y++) {
      for (let x = 0; x < 12; x++) {
        const src = 3 * (Math.floor(y / s) * 3 + Math.floor(x / s));
        const d = 4 * (y * 12 + x);
        expect([...decoded.data.subarray(d, d + 3)]).toEqual([...img.subarray(src, src + 3)]);
      }
    }
  });

  it('rejects a buffer of the wrong size and a bad scale', () => {
    expect(() => encodePng(new Uint8Array(10), 2, 2)).toThrow(/rgb has 10 bytes, expected width\*height\*3 = 12/);
    expect(() => encodePng(new Uint8Array(12), 2, 2, 0)).toThrow(/scale/);
    expect(() => encodePng(new Uint8Array(12), 2.5, 2)).toThrow(/width/);
  });
});

describe('writePng', () => {
  it('writes the file atomically and leaves no temporary file behind', () => {
    const img = randomImage(4, 4, 3);
    const path = join(dir, 'a.png');
    writePng(path, img, 4, 4, 2);
    writePng(path, img, 4, 4, 2); // overwrite
    expect(readdirSync(dir)).toEqual(['a.png']);
    const decoded = PNG.sync.read(readFileSync(path));
    expect([decoded.width, decoded.height]).toEqual([8, 8]);
    expect([...decoded.data.subarray(0, 3)]).toEqual([...img.subarray(0, 3)]);
  });

  it('does not leave a temporary file when writing fails', () => {
    writeFileSync(join(dir, 'blocker'), 'a file where a folder should be');
    expect(() => writePng(join(dir, 'blocker', 'b.png'), randomImage(2, 2, 4), 2, 2)).toThrow();
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
});
