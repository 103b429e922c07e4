/** 64-bit FNV-1a over the bytes of typed arrays / strings, as 16 hex chars. Browser-safe. */
export class Hasher {
  private h1 = 0x84222325;
  private h0 = 0xcbf29ce4;

  update(data: ArrayBufferView | string): this {
    const bytes =
      typeof data === 'string'
        ? new TextEncoder().encode(data)
        : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    let lo = this.h1;
    let hi = this.h0;
    for (let i = 0; i < bytes.length; i++) {
      lo ^= bytes[i];
      // multiply (hi,lo) by the FNV prime 0x100000001b3 in 32-bit halves
      const loMul = lo * 0x1b3;
      const carry = Math.floor(loMul / 0x100000000);
      hi = (Math.imul(hi, 0x1b3) + Math.imul(lo, 0x100) + carry) >>> 0;
      lo = loMul >>> 0;
    }
    this.h1 = lo;
    this.h0 = hi;
    return this;
  }

  digest(): string {
    return this.h0.toString(16).padStart(8, '0') + this.h1.toString(16).padStart(8, '0');
  }
}

export function hashOf(...parts: (ArrayBufferView | string)[]): string {
  const h = new Hasher();
  for (const p of parts) h.update(p);
  return h.digest();
}
