/**
 * A growable byte writer and its reader: unsigned LEB128 varints, little-endian floats. The
 * wire formats of the outcome deltas and the decision table are built from these.
 */
export class ByteWriter {
  private buf: Buffer;
  private pos = 0;

  constructor(initial = 1024) {
    this.buf = Buffer.allocUnsafe(initial);
  }

  private room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  u8(v: number): void {
    this.room(1);
    this.buf[this.pos++] = v & 0xff;
  }

  /** Non-negative integer up to 2^53. */
  varint(v: number): void {
    this.room(8);
    while (v >= 0x80) {
      this.buf[this.pos++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buf[this.pos++] = v;
  }

  /** Signed integer as zigzag varint. */
  svarint(v: number): void {
    this.varint(v >= 0 ? v * 2 : -v * 2 - 1);
  }

  f64(v: number): void {
    this.room(8);
    this.buf.writeDoubleLE(v, this.pos);
    this.pos += 8;
  }

  f32(v: number): void {
    this.room(4);
    this.buf.writeFloatLE(v, this.pos);
    this.pos += 4;
  }

  u32(v: number): void {
    this.room(4);
    this.buf.writeUInt32LE(v >>> 0, this.pos);
    this.pos += 4;
  }

  bytes(b: Uint8Array): void {
    this.room(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  get length(): number {
    return this.pos;
  }

  /** A copy of what was written; the writer can be reset and reused. */
  finish(): Buffer {
    return Buffer.from(this.buf.subarray(0, this.pos));
  }

  reset(): void {
    this.pos = 0;
  }
}

export class FormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FormatError';
  }
}

export class ByteReader {
  pos = 0;
  constructor(private readonly buf: Buffer) {}

  private need(n: number): void {
    if (this.pos + n > this.buf.length) throw new FormatError('truncated message');
  }

  u8(): number {
    this.need(1);
    return this.buf[this.pos++];
  }

  varint(): number {
    let v = 0;
    let mul = 1;
    for (let i = 0; i < 8; i++) {
      const b = this.u8();
      v += (b & 0x7f) * mul;
      if (b < 0x80) return v;
      mul *= 0x80;
    }
    throw new FormatError('varint too long');
  }

  svarint(): number {
    const z = this.varint();
    return z % 2 === 0 ? z / 2 : -(z + 1) / 2;
  }

  f64(): number {
    this.need(8);
    const v = this.buf.readDoubleLE(this.pos);
    this.pos += 8;
    return v;
  }

  u32(): number {
    this.need(4);
    const v = this.buf.readUInt32LE(this.pos);
    this.pos += 4;
    return v;
  }

  f32(): number {
    this.need(4);
    const v = this.buf.readFloatLE(this.pos);
    this.pos += 4;
    return v;
  }

  done(): boolean {
    return this.pos >= this.buf.length;
  }
}
