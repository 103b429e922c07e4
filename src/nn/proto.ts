// Minimal protocol-buffers wire format: enough to write and read ONNX models without a schema
// compiler. Browser-safe (no Node APIs).

/** Builds one message. Nested messages are encoded separately and embedded as bytes. */
export class ProtoWriter {
  private chunks: Uint8Array[] = [];
  private buf = new Uint8Array(256);
  private pos = 0;

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    this.chunks.push(this.buf.subarray(0, this.pos));
    this.buf = new Uint8Array(Math.max(256, n));
    this.pos = 0;
  }

  private varint(value: number | bigint): void {
    this.ensure(10);
    if (typeof value === 'number' && value >= 0 && value <= Number.MAX_SAFE_INTEGER) {
      let v = value;
      while (v >= 0x80) {
        this.buf[this.pos++] = (v % 0x80) | 0x80;
        v = Math.floor(v / 0x80);
      }
      this.buf[this.pos++] = v;
      return;
    }
    // Negative int64 values are written as their 64-bit two's complement (10 bytes).
    let v = BigInt.asUintN(64, BigInt(value));
    while (v >= 0x80n) {
      this.buf[this.pos++] = Number(v & 0x7fn) | 0x80;
      v >>= 7n;
    }
    this.buf[this.pos++] = Number(v);
  }

  private tag(field: number, wire: number): void {
    this.varint(field * 8 + wire);
  }

  int(field: number, value: number): this {
    this.tag(field, 0);
    this.varint(value);
    return this;
  }

  float(field: number, value: number): this {
    this.tag(field, 5);
    this.ensure(4);
    new DataView(this.buf.buffer, this.buf.byteOffset + this.pos, 4).setFloat32(0, value, true);
    this.pos += 4;
    return this;
  }

  bytes(field: number, data: Uint8Array): this {
    this.tag(field, 2);
    this.varint(data.length);
    if (data.length > 4096) {
      this.chunks.push(this.buf.subarray(0, this.pos), data);
      this.buf = new Uint8Array(256);
      this.pos = 0;
    } else {
      this.ensure(data.length);
      this.buf.set(data, this.pos);
      this.pos += data.length;
    }
    return this;
  }

  string(field: number, value: string): this {
    return this.bytes(field, new TextEncoder().encode(value));
  }

  message(field: number, sub: ProtoWriter): this {
    return this.bytes(field, sub.finish());
  }

  /** Packed repeated varints (proto3 default for repeated scalars). */
  packedInts(field: number, values: readonly number[]): this {
    const sub = new ProtoWriter();
    for (const v of values) sub.varint(v);
    return this.bytes(field, sub.finish());
  }

  finish(): Uint8Array {
    const parts = [...this.chunks, this.buf.subarray(0, this.pos)];
    const total = parts.reduce((s, p) => s + p.length, 0);
    const out = new Uint8Array(total);
    let off = 0;
    for (const p of parts) {
      out.set(p, off);
      off += p.length;
    }
    return out;
  }
}

export interface ProtoField {
  field: number;
  wire: number;
  /** Varints as numbers (int64 values beyond 2^53 lose precision; ONNX dims never get there). */
  int: number;
  bytes: Uint8Array;
}

/** Reads every top-level field of one message, in order. */
export function readFields(data: Uint8Array): ProtoField[] {
  const out: ProtoField[] = [];
  let pos = 0;
  const varint = (): number => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (pos >= data.length) throw new Error('protobuf: truncated varint');
      const b = data[pos++];
      result |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) break;
      shift += 7n;
    }
    return Number(BigInt.asIntN(64, result));
  };
  const empty = new Uint8Array(0);
  while (pos < data.length) {
    const key = varint();
    const field = Math.floor(key / 8);
    const wire = key % 8;
    if (wire === 0) out.push({ field, wire, int: varint(), bytes: empty });
    else if (wire === 2) {
      const len = varint();
      if (pos + len > data.length) throw new Error(`protobuf: field ${field} runs past the end`);
      out.push({ field, wire, int: 0, bytes: data.subarray(pos, pos + len) });
      pos += len;
    } else if (wire === 5 || wire === 1) {
      const len = wire === 5 ? 4 : 8;
      out.push({ field, wire, int: 0, bytes: data.subarray(pos, pos + len) });
      pos += len;
    } else throw new Error(`protobuf: unsupported wire type ${wire} at field ${field}`);
  }
  return out;
}

/** Decodes a packed (or single unpacked) repeated varint field's values. */
export function readPackedInts(f: ProtoField): number[] {
  if (f.wire === 0) return [f.int];
  return readFields(prefixPacked(f.bytes)).map((x) => x.int);
}

// Packed varints carry no tags; give each value a tag-1 varint key so readFields can parse them.
function prefixPacked(bytes: Uint8Array): Uint8Array {
  const out: number[] = [];
  for (let i = 0; i < bytes.length; i++) {
    if (i === 0 || bytes[i - 1] < 0x80) out.push(8);
    out.push(bytes[i]);
  }
  return Uint8Array.from(out);
}

export function utf8(bytes: Uint8Array): string {
  return new TextDecoder().decode(bytes);
}
