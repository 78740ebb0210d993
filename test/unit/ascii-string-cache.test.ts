/**
 * json-bytes.ts's asciiString: the decoded-string cache answers a string only when every byte
 * matches (its slot is chosen by the length and three bytes, so strings that differ elsewhere
 * share a slot), and a slot taken over by another string answers the new one.
 */
import { Buffer } from 'node:buffer';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { asciiString } from '../../src/http/json-bytes.js';

/** asciiString of `s` read from inside a larger buffer, at an offset (as a body's value is). */
const decoded = (s: string, pad = 3) => asciiString(Buffer.from(`${'x'.repeat(pad)}${s}"`, 'latin1'), pad, pad + s.length);

describe('asciiString', () => {
  it('tells apart strings that share a slot (same length, same first, middle and last bytes)', () => {
    expect(decoded('aBcDe')).toBe('aBcDe');
    expect(decoded('aXcYe')).toBe('aXcYe'); // same slot, bytes 1 and 3 differ
    expect(decoded('aBcDe')).toBe('aBcDe'); // and back
    expect(decoded('rule_000123')).toBe('rule_000123');
    expect(decoded('rule_100120')).toBe('rule_100120');
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
