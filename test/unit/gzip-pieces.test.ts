/**
 * gzipInPieces (src/metrics/gzip-pieces.ts): the metrics render thread's compression, piece by
 * piece with a call between pieces, still one gzip member of exactly the text.
 */
import { gunzipSync, inflateRawSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { gzipInPieces, PIECE_BYTES } from '../../src/metrics/gzip-pieces.js';

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

describe('gzipInPieces', () => {
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
