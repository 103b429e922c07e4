// PNG output for rendered RGB frames (Node-only): encode with pngjs, optional nearest-neighbour
// upscale so a person can look at a 64x64 observation, atomic file writes.
import { PNG } from 'pngjs';
import { commitFiles } from '../store/index.ts';

function checkImage(rgb: Uint8Array, width: number, height: number, scale: number): void {
  if (!Number.isInteger(width) || width <= 0) throw new RangeError(`width must be a positive integer, got ${width}`);
  if (!Number.isInteger(height) || height <= 0)
    throw new RangeError(`height must be a positive integer, got ${height}`);
  if (!Number.isInteger(scale) || scale < 1 || scale > 64)
    throw new RangeError(`scale must be an integer in [1, 64], got ${scale}`);
  if (rgb.length !== width * height * 3)
    throw new RangeError(`rgb has ${rgb.length} bytes, expected width*height*3 = ${width * height * 3}`);
}

/** Encodes row-major RGB bytes (top row first) as an RGBA PNG, each pixel repeated scale x scale. */
export function encodePng(rgb: Uint8Array, width: number, height: number, scale = 1): Buffer {
  checkImage(rgb, width, height, scale);
  const W = width * scale;
  const H = height * scale;
  const png = new PNG({ width: W, height: H });
  const data = png.data;
  for (let y = 0; y < H; y++) {
    const srcRow = Math.floor(y / scale) * width;
    for (let x = 0; x < W; x++) {
      const s = 3 * (srcRow + Math.floor(x / scale));
      const d = 4 * (y * W + x);
      data[d] = rgb[s];
      data[d + 1] = rgb[s + 1];
      data[d + 2] = rgb[s + 2];
      data[d + 3] = 255;
    }
  }
  return PNG.sync.write(png);
}

/** Writes the PNG as one commit (src/store): a crash leaves the old file or the new one. */
export function writePng(path: string, rgb: Uint8Array, width: number, height: number, scale = 1): void {
  commitFiles([{ path, data: encodePng(rgb, width, height, scale) }]);
}
