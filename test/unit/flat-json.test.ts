/**
 * flat-json.ts must never change an answer: whatever it parses, it parses exactly as
 * JSON.parse does (same keys, same order, same values, numbers to the bit), and everything
 * else (it returns undefined) goes to JSON.parse and the full checks.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FlatKeys, parseFlatJson } from '../../src/http/flat-json.js';

const KEYS = ['country', 'currency', 'payment_method', 'card_type', 'amount', 'success', 'error_code', 'transaction_id'];
const keys = new FlatKeys(KEYS);
const parse = (text: string) => parseFlatJson(Buffer.from(text, 'utf8'), keys);

/** Same value and key order as JSON.parse; Object.is tells -0 from 0. */
function expectSameAsJsonParse(text: string, got: Record<string, unknown>): void {
  const want = JSON.parse(text) as Record<string, unknown>;
  expect(Object.keys(got)).toEqual(Object.keys(want));
  for (const k of Object.keys(want)) expect(Object.is(got[k], want[k]), `${k} in ${text}`).toBe(true);
  expect(Object.getPrototypeOf(got)).toBe(Object.prototype);
}

describe('flat JSON', () => {
  it('parses the usual hot bodies as JSON.parse does', () => {
    for (const text of [
      '{"country":"US","currency":"USD","payment_method":"card","card_type":"visa","amount":42}',
      ' {\n\t"country" : "us" ,\r\n "amount" : 0.1 }  ',
      '{"success":true,"error_code":null,"amount":1234567.25}',
      '{"success":false,"transaction_id":"tx:1-2_3.4"}',
      '{}',
      '{"amount":0}',
      '{"amount":0.000001}',
      '{"amount":999999999999999}',
      '{"amount":1234567890123456}', // 16 digits and more: converted from their text
      '{"amount":339.8298173981612}', // what Math.random() * 1000 prints
      '{"amount":0.30000000000000004}',
      '{"amount":9007199254740993}', // past 2^53: rounds as JSON.parse rounds
      `{"amount":${'9'.repeat(400)}}`, // Infinity for both
    ]) {
      const got = parse(text);
      expect(got, text).toBeDefined();
      expectSameAsJsonParse(text, got!);
    }
  });

  it('leaves every other form to JSON.parse', () => {
    for (const text of [
      '',
      '   ',
      '[]',
      '"x"',
      '{"country":"US"',
      '{"country":"US",}',
      '{"country":"US"} x',
      '{"country":"US"}{}',
      '{"country":"U\\u0053"}', // escape
      '{"country":"\u00c9S"}', // non-ASCII
      '{"country":"a\tb"}', // raw control character (invalid JSON)
      '{"country":"US","country":"FR"}', // repeated key
      '{"other":1}', // unknown key
      '{"__proto__":{}}',
      '{"amount":-1}',
      '{"amount":1e3}',
      '{"amount":01}',
      '{"amount":1.}',
      '{"amount":.5}',
      '{"amount":{"x":1}}',
      '{"amount":[1]}',
      '{"success":tru}',
      '{"success":truex}',
      '{"success":nul}',
      "{'country':'US'}",
      '{country:"US"}',
    ]) {
      expect(parse(text), text).toBeUndefined();
    }
  });

  it('parses whatever it accepts exactly as JSON.parse does (generated bodies)', () => {
    const value = fc.oneof(
      fc.stringMatching(/^[ -~]{0,70}$/), // printable ASCII, incl. quotes and backslashes
      fc.string({ unit: 'binary', maxLength: 8 }),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.integer({ min: 0, max: 2 ** 53 }),
      fc.constantFrom(0, 0.1, 0.2, 0.3, 42.5, 1e15, 1e16, 123.456789012345, 5e-324),
      fc.boolean(),
      fc.constant(null),
      fc.constant([]),
    );
    const body = fc.dictionary(fc.constantFrom(...KEYS, 'other', '__proto__'), value);
    const spacing = fc.constantFrom('', ' ', '\n', '\t ');
    fc.assert(
      fc.property(body, spacing, (b, sp) => {
        const text = sp + JSON.stringify(b, null, sp.trim() === '' && sp !== '' ? sp : undefined) + sp;
        const got = parse(text);
        if (got !== undefined) expectSameAsJsonParse(text, got);
      }),
      { numRuns: 20000 },
    );
  });

  it('parses exactly as JSON.parse does, or declines, on arbitrary text', () => {
    const text = fc.oneof(
      fc.string(),
      fc.json(),
      fc.stringMatching(/^\{("(country|amount|success)":(-?[0-9.eE+-]{1,8}|"[a-zA-Z\\"]{0,4}"|true|false|null|\{\}),?){0,3}\}$/),
    );
    fc.assert(
      fc.property(text, (t) => {
        const got = parse(t);
        if (got === undefined) return;
        let want: unknown;
        expect(() => (want = JSON.parse(t)), t).not.toThrow();
        expect(want).not.toBeNull();
        expectSameAsJsonParse(t, got);
      }),
      { numRuns: 20000 },
    );
  });

  it('returns the same string for a repeated value, and the right one after a cache collision', () => {
    const a = parse('{"country":"US"}')!.country;
    const b = parse('{"country":"US"}')!.country;
    expect(a).toBe('US');
    expect(b).toBe(a);
    // Many distinct values through the same small cache: each still decodes to itself.
    for (let i = 0; i < 5000; i++) expect(parse(`{"transaction_id":"t${i}"}`)!.transaction_id).toBe(`t${i}`);
  });

  it('refuses more keys than its bit mask holds', () => {
    expect(() => new FlatKeys(Array.from({ length: 31 }, (_, i) => `k${i}`))).toThrow(/at most 30/);
  });
});
