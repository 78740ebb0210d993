/**
 * GzipWriter (src/metrics/gzip-pieces.ts): the metrics render thread's compression, piece by
 * piece with a call between pieces, still one gzip member of exactly the text.
 */
import { gunzipSync, inflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { GzipWriter, PIECE_BYTES } from '../../src/metrics/gzip-pieces.js';

/** `t` as one member through a GzipWriter, written in one call. */
function gzipInPieces(t: Buffer, between: () => void, pieceBytes = PIECE_BYTES): Buffer {
  const w = new GzipWriter(between, pieceBytes);
  w.begin();
  w.writeBytes(t);
  return w.finish();
}

function text(bytes: number): Buffer {
  const lines: string[] = [];
  let n = 0;
  for (let i = 0; n < bytes; i++) {
    const line = `service_processor_success_rate{rule_id="r${i}",processor_id="p${i % 7}",tenant_id="t${i % 5}"} ${(i * 0.618) % 1}\n`;
    lines.push(line);
    n += line.length;
  }
  return Buffer.from(lines.join('').slice(0, bytes));
}

describe('GzipWriter: a text written whole', () => {
  it.each([1, PIECE_BYTES - 1, PIECE_BYTES, PIECE_BYTES + 1, 5 * PIECE_BYTES + 123])('%i bytes: one member holding exactly the text', (bytes) => {
    const t = text(bytes);
    let calls = 0;
    const gz = gzipInPieces(t, () => calls++);
    expect(gunzipSync(gz).equals(t)).toBe(true);
    // One member: the trailer holds the length of the whole text, and the deflate data ends
    // exactly before it (inflating the body alone gives the text back).
    expect(gz.readUInt32LE(gz.length - 4)).toBe(t.length);
    expect(inflateRawSync(gz.subarray(10, gz.length - 8)).equals(t)).toBe(true);
    expect(calls).toBe(Math.max(0, Math.ceil(t.length / PIECE_BYTES) - 1));
  });

  it('compresses about as well as one piece', () => {
    const t = text(20 * PIECE_BYTES);
    const whole = gzipInPieces(t, () => {}, t.length);
    const pieces = gzipInPieces(t, () => {});
    expect(pieces.length).toBeLessThan(whole.length * 1.1);
  });
});

describe('GzipWriter: a text written as it is rendered', () => {
  // Strings as the render thread writes them: chunks of any size, some with multi-byte
  // characters (a label value may hold any text), some larger than a piece.
  const chunks = (sizes: number[]) => sizes.map((n, i) => (i % 3 === 0 ? 'é€😀x' : 'abc\n').repeat(Math.ceil(n / 4)).slice(0, n));

  it.each([
    ['nothing', []],
    ['one short chunk', [10]],
    ['chunks filling exactly one piece', [PIECE_BYTES / 2, PIECE_BYTES / 2]],
    ['chunks across pieces', [1000, PIECE_BYTES - 7, 3 * PIECE_BYTES + 5, 1, 20_000]],
    ['many small chunks', Array(500).fill(777)],
  ])('%s: one member holding exactly the text written, compressed a piece at a time', (_, sizes) => {
    const parts = chunks(sizes as number[]);
    const plain = Buffer.from(parts.join(''), 'utf8');
    let calls = 0;
    const w = new GzipWriter(() => calls++);
    w.begin();
    for (const p of parts) w.write(p);
    expect(w.length).toBe(plain.length);
    const gz = w.finish();
    expect(gunzipSync(gz).equals(plain)).toBe(true);
    expect(gz.readUInt32LE(gz.length - 4)).toBe(plain.length);
    expect(inflateRawSync(gz.subarray(10, gz.length - 8)).equals(plain)).toBe(true);
    expect(calls).toBe(Math.max(0, Math.ceil(plain.length / PIECE_BYTES) - 1));
  });

  it('a member larger than the compressed bytes it kept so far (incompressible text), then a small one', () => {
    let seed = 7;
    const noise = Buffer.alloc(5 * PIECE_BYTES + 99, 0).map(() => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) >>> 24);
    const w = new GzipWriter(() => {});
    w.begin();
    w.writeBytes(noise);
    const big = w.finish();
    expect(big.length).toBeGreaterThan(noise.length); // stored, not compressed: the kept bytes grew past 64 KB
    expect(gunzipSync(big).equals(noise)).toBe(true);
    // The member owns its memory whole (the render thread hands it over by transfer).
    expect(big.byteOffset).toBe(0);
    expect(big.buffer.byteLength).toBe(big.length);
    w.begin();
    w.write('small\n');
    expect(gunzipSync(w.finish()).toString()).toBe('small\n');
  });

  it('starts afresh at begin(): a second member holds only its own text', () => {
    const w = new GzipWriter(() => {});
    w.begin();
    w.write('x'.repeat(3 * PIECE_BYTES));
    w.finish();
    w.begin();
    w.write('second\n');
    expect(gunzipSync(w.finish()).toString()).toBe('second\n');
  });
});
