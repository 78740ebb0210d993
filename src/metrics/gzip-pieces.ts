/**
 * One gzip member made piece by piece, with a call between two pieces (the render thread
 * sleeps there: engine/worker/bursts.ts), instead of one gzipSync of the whole text: the
 * thread's longest run of work is one piece (~0.1 ms), not the whole text (~1.5-3 ms at 1,000
 * rules, ~50 ms at 20,000). Each piece is compressed on its own as raw deflate ending in a
 * sync flush (byte-aligned, not final), the last one with the final block, so the pieces
 * simply follow each other inside one member, between the gzip header and a trailer holding
 * the CRC-32 and length of the whole text (how pigz compresses in parallel). A piece does not
 * refer back into the one before; at 64 KiB per piece that costs under 1% in size.
 * Level 1: for this text ~8% larger than level 4 in half the time.
 * Needs zlib.crc32 (Node ≥ 20.15); without it the text is compressed in one piece.
 */
import * as zlib from 'node:zlib';

export const PIECE_BYTES = 64 * 1024;
export const GZIP_LEVEL = 1;

/** The fixed 10-byte header of a gzip member: deflate, no name or time, OS unknown. */
const HEADER = Buffer.from([0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0xff]);

const crc32 = (zlib as { crc32?: (data: Uint8Array, value?: number) => number }).crc32;

/**
 * One gzip member written as its text arrives: the bytes are gathered PIECE_BYTES at a time,
 * and each full piece is compressed (calling `between` after it) when more text follows. The
 * whole text is never held: at 100,000 rules it is ~21 MB per scrape, and a buffer kept for it
 * from one rendering to the next was that much of the service's RSS for good.
 */
export class GzipWriter {
  private readonly piece: Buffer;
  private filled = 0;
  /** The plain pieces, when zlib.crc32 is missing (compressed in one piece at finish()). */
  private parts: Buffer[] = [];
  /**
   * The compressed pieces so far, copied here as each is made and kept from one member to the
   * next (it grows to the largest member: ~2.5 MB at 100,000 rules). zlib hands each piece back
   * in a 16 KB buffer of its own; kept in a list until finish(), those outlived the thread's
   * young generation, and ~330 of them a scrape stayed in its malloc arena until a full
   * collection, which the thread seldom needs (+13 MB of RSS over ten scrapes).
   */
  private out = Buffer.allocUnsafeSlow(64 * 1024);
  private outLength = 0;
  private crc = 0;
  /** Plain bytes written since begin(). */
  length = 0;

  constructor(
    private readonly between: () => void,
    pieceBytes = PIECE_BYTES,
  ) {
    this.piece = Buffer.allocUnsafeSlow(pieceBytes);
  }

  /** Starts a new member (drops what an unfinished one held). */
  begin(): void {
    this.parts = [];
    this.outLength = 0;
    this.filled = 0;
    this.crc = 0;
    this.length = 0;
  }

  write(text: string): void {
    const n = Buffer.byteLength(text, 'utf8');
    if (n <= this.piece.length - this.filled) {
      this.filled += this.piece.write(text, this.filled, 'utf8');
      this.length += n;
      return;
    }
    this.writeBytes(Buffer.from(text, 'utf8'));
  }

  writeBytes(bytes: Uint8Array): void {
    for (let at = 0; at < bytes.length; ) {
      if (this.filled === this.piece.length) this.compress(false);
      const k = Math.min(bytes.length - at, this.piece.length - this.filled);
      this.piece.set(bytes.subarray(at, at + k), this.filled);
      this.filled += k;
      at += k;
    }
    this.length += bytes.length;
  }

  /** The member: header, the pieces (the last one final), and the CRC-32 and length of the whole text. */
  finish(): Buffer {
    if (crc32 === undefined) return zlib.gzipSync(Buffer.concat([...this.parts, this.piece.subarray(0, this.filled)]), { level: GZIP_LEVEL });
    this.compress(true);
    // A buffer of its own (not Node's shared pool): the render thread hands it over by transfer.
    const member = Buffer.allocUnsafeSlow(HEADER.length + this.outLength + 8);
    HEADER.copy(member, 0);
    this.out.copy(member, HEADER.length, 0, this.outLength);
    const at = HEADER.length + this.outLength;
    member.writeUInt32LE(this.crc >>> 0, at);
    member.writeUInt32LE(this.length % 2 ** 32, at + 4);
    this.outLength = 0;
    return member;
  }

  /** Appends compressed bytes to `out`, doubling it when full. */
  private keep(bytes: Buffer): void {
    if (this.outLength + bytes.length > this.out.length) {
      const bigger = Buffer.allocUnsafeSlow(Math.max(this.out.length * 2, this.outLength + bytes.length));
      this.out.copy(bigger, 0, 0, this.outLength);
      this.out = bigger;
    }
    bytes.copy(this.out, this.outLength);
    this.outLength += bytes.length;
  }

  /** The piece so far as raw deflate: a sync flush (byte-aligned, not final), or the final block. */
  private compress(last: boolean): void {
    const piece = this.piece.subarray(0, this.filled);
    this.filled = 0;
    // Without zlib.crc32 the text is kept plain and compressed in one piece at finish().
    if (crc32 === undefined) return void this.parts.push(Buffer.from(piece));
    this.keep(zlib.deflateRawSync(piece, { level: GZIP_LEVEL, finishFlush: last ? zlib.constants.Z_FINISH : zlib.constants.Z_SYNC_FLUSH }));
    this.crc = crc32(piece, this.crc);
    if (!last) this.between();
  }
}
