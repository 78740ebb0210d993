/**
 * The hot path reads a Content-Length of plain digits itself (content-length.ts): it must give
 * the number Number() gives for every value, so that the body limit refuses the same requests.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { contentLengthValue } from '../../src/http/content-length.js';

const asNumberDid = (s: string) => Number(s || '0');

describe('contentLengthValue', () => {
  it('reads digits as Number() does, and leaves every other spelling to Number()', () => {
    for (const s of ['', '0', '7', '118', '1048576', '000123', '999999999999999', '9999999999999999', '12345678901234567890', ' 12', '12 ', '1e3', '0x10', '-1', '+5', '1.5', 'abc', '１２'])
      expect(Object.is(contentLengthValue(s), asNumberDid(s)), JSON.stringify(s)).toBe(true);
  });

  it('agrees with Number() on any string of digits and on any short string', () => {
    fc.assert(fc.property(fc.stringMatching(/^[0-9]{0,20}$/), (s) => Object.is(contentLengthValue(s), asNumberDid(s))));
    fc.assert(fc.property(fc.string({ maxLength: 18 }), (s) => Object.is(contentLengthValue(s), asNumberDid(s))));
  });
});
