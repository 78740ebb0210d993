/** msgpackBin writes what msgpackr's pack() writes for a byte string, at every header size. */
import { pack, unpack } from 'msgpackr';
import { describe, expect, it } from 'vitest';
import { msgpackBin } from '../../src/store/msgpack-bin.js';

describe('msgpackBin', () => {
  it.each([0, 1, 255, 256, 1064, 65535, 65536, 70_000])('is byte for byte msgpackr for %i bytes', (n) => {
    const bytes = Buffer.alloc(n);
    for (let i = 0; i < n; i++) bytes[i] = (i * 31 + 7) & 0xff;
    const ours = msgpackBin(bytes);
    expect(Buffer.compare(ours, pack(bytes))).toBe(0);
    expect(Buffer.compare(Buffer.from(unpack(ours) as Uint8Array), bytes)).toBe(0);
  });

  it('takes a view at an offset of a larger buffer', () => {
    const big = Buffer.from([9, 9, 1, 2, 3, 9]);
    expect([...msgpackBin(big.subarray(2, 5))]).toEqual([0xc4, 3, 1, 2, 3]);
  });
});
