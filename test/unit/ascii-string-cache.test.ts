/**
 * json-bytes.ts's string readers. asciiString: the decoded-string cache answers a string only when every byte
 * matches (its slot is chosen by the length and six bytes, so strings that differ elsewhere
 * share a slot), and a slot taken over by another string answers the new one. Its slots
 * spread the id families clients use, or their values replace one another at every body.
 * capitalsCode answers every code of two or three capitals, and nothing else; bytesEqual, which
 * both compare with, agrees with a byte-by-byte compare.
 */
import { Buffer } from 'node:buffer';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { asciiString, bytesEqual, CACHE_SLOTS, capitalsCode, slotOf } from '../../src/http/json-bytes.js';

/** asciiString of `s` read from inside a larger buffer, at an offset (as a body's value is). */
const decoded = (s: string, pad = 3) => asciiString(Buffer.from(`${'x'.repeat(pad)}${s}"`, 'latin1'), pad, pad + s.length);

describe('asciiString', () => {
  it('tells apart strings that share a slot (same length, same first, middle and last bytes)', () => {
    expect(decoded('aBcDe')).toBe('aBcDe');
    expect(decoded('aXcYe')).toBe('aXcYe'); // bytes 1 and 3 differ
    const shared = ['r-0001-x-0001', 'r-1001-x-0001']; // same slot: they differ only at byte 2
    expect(slotOf(Buffer.from(shared[0]), 0, 13)).toBe(slotOf(Buffer.from(shared[1]), 0, 13));
    for (const v of [...shared, ...shared]) expect(decoded(v)).toBe(v);
    expect(decoded('aBcDe')).toBe('aBcDe'); // and back
    expect(decoded('rule_000123')).toBe('rule_000123');
    expect(decoded('rule_100120')).toBe('rule_100120');
  });

  it('spreads ids that differ only in their last characters over the slots', () => {
    const families: [string, (i: number) => string][] = [
      ['rule-0000 … rule-0999', (i) => `rule-${String(i).padStart(4, '0')}`],
      ['r0 … r999 (the bench)', (i) => `r${i}`],
      ['us_usd_card_0 …', (i) => `us_usd_card_${i}`],
      ['tx suffixes', (i) => `pay_2026_11_29_${String(i).padStart(6, '0')}`],
    ];
    for (const [name, id] of families) {
      const slots = new Set<number>();
      for (let i = 0; i < 1000; i++) {
        const b = Buffer.from(id(i), 'latin1');
        slots.add(slotOf(b, 0, b.length));
      }
      // 1,000 keys thrown at random into 2,048 slots land in ~790 of them.
      expect(slots.size, name).toBeGreaterThan(650);
    }
    for (const n of [0, 1, 2, 3, 4]) expect(slotOf(Buffer.from('abcd'.slice(0, n)), 0, n)).toBeLessThan(CACHE_SLOTS);
  });

  it('always returns the bytes as a string, whatever came before', () => {
    const ascii = fc.string({ unit: fc.constantFrom(...'abcXY_0189:-.'), maxLength: 70 });
    fc.assert(
      fc.property(fc.array(fc.tuple(ascii, fc.nat(5)), { minLength: 1, maxLength: 60 }), (steps) => {
        for (const [s, pad] of steps) expect(decoded(s, pad)).toBe(s);
      }),
      { numRuns: 500 },
    );
  });
});

describe('capitalsCode', () => {
  const code = (s: string, pad = 2) => capitalsCode(Buffer.from(`${'x'.repeat(pad)}${s}"`, 'latin1'), pad, s.length);

  it('answers every code of two or three capitals, again and again', () => {
    const letters = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
    for (const a of letters) {
      for (const b of letters) {
        expect(code(a + b)).toBe(a + b);
        for (const c of 'AMZ') expect(code(a + b + c, 1)).toBe(a + b + c);
      }
    }
    expect(code('US')).toBe('US'); // from its slot the second time
    expect(code('USD', 0)).toBe('USD');
  });

  it('declines anything else: other lengths, lower case, the bytes either side of A-Z', () => {
    for (const s of ['', 'U', 'USDX', 'us', 'Us', 'uS', 'usd', 'USd', '@A', 'A[', 'Z@', '[A', 'U1', 'U D', 'É']) expect(code(s), s).toBeUndefined();
  });
});

describe('bytesEqual', () => {
  it('agrees with a byte-by-byte compare, at any offsets and length', () => {
    const bytes = fc.uint8Array({ minLength: 0, maxLength: 40 });
    fc.assert(
      fc.property(bytes, bytes, fc.nat(40), fc.nat(40), fc.nat(40), (a, b, i, j, len) => {
        const n = Math.min(len, a.length - Math.min(i, a.length), b.length - Math.min(j, b.length));
        const x = Math.min(i, a.length);
        const y = Math.min(j, b.length);
        let same = true;
        for (let k = 0; k < n; k++) if (a[x + k] !== b[y + k]) same = false;
        expect(bytesEqual(a, x, b, y, n)).toBe(same);
        expect(bytesEqual(a, x, a, x, n)).toBe(true);
      }),
      { numRuns: 2000 },
    );
    // A difference at each position of a long word is seen (the four-byte steps and the tail).
    const word = Buffer.from('transaction_type');
    for (let k = 0; k < word.length; k++) {
      const other = Buffer.from(word);
      other[k] ^= 1;
      expect(bytesEqual(word, 0, other, 0, word.length), `byte ${k}`).toBe(false);
    }
  });
});
