/**
 * json-bytes.ts's asciiString: the decoded-string cache answers a string only when every byte
 * matches (its slot is chosen by the length and six bytes, so strings that differ elsewhere
 * share a slot), and a slot taken over by another string answers the new one. Its slots
 * spread the id families clients use, or their values replace one another at every body.
 */
import { Buffer } from 'node:buffer';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { asciiString, CACHE_SLOTS, slotOf } from '../../src/http/json-bytes.js';

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
