/**
 * plain-body.ts must never change an answer: a body it decodes holds exactly what JSON.parse
 * gives for every field (and nothing for the others), and the schema accepts it; everything
 * else it declines (undefined), and the flat parser, JSON.parse and the full schema check
 * answer as before. And it must take the bodies clients usually send, or it saves nothing.
 */
import fc from 'fast-check';
import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { decodePlainBody } from '../../src/http/plain-body.js';
import { OUTCOME_REPORT_FORM, PlainField, PlainForm, PlainKind, plainOutcomeReport, plainRouteRequest, QuotedWord, ROUTE_REQUEST_FORM } from '../../src/schemas/hot-bodies.js';
import { OutcomeReport, RouteRequest } from '../../src/schemas/routing.js';
import { outcomeReport as outcomeExample, routeRequest as routeExample } from '../../src/schemas/examples.js';
import { routeRequests, sampleRules } from '../../bench/lib/requests.js';
import { ruleSet } from '../../bench/lib/seed.js';

/** A value JSON.stringify writes in the plain form: no exponent, no sign. */
const writtenPlainly = (v: unknown) => typeof v !== 'number' || /^(0|[1-9][0-9]*)(\.[0-9]+)?$/.test(String(v));

const decode = <T>(form: PlainForm<T>, text: string) => decodePlainBody(form, Buffer.from(text, 'utf8'));

const forms: [string, PlainForm<unknown>, TSchema, (v: unknown) => boolean][] = [
  ['route', ROUTE_REQUEST_FORM as PlainForm<unknown>, RouteRequest, plainRouteRequest],
  ['outcome', OUTCOME_REPORT_FORM as PlainForm<unknown>, OutcomeReport, plainOutcomeReport],
];

/** Every field of the form: what JSON.parse gave (Object.is: -0, NaN), undefined where the body has none. */
function expectSameFields(form: PlainForm<unknown>, text: string, got: unknown): void {
  const want = JSON.parse(text) as Record<string, unknown>;
  expect(Object.keys(got as object)).toEqual(form.names); // one shape for every body
  for (const name of form.names) expect(Object.is((got as Record<string, unknown>)[name], want[name]), `${name} in ${text}`).toBe(true);
}

describe('plain hot bodies, decoded from their bytes', () => {
  it('has exactly the schema\'s fields', () => {
    for (const [, form, schema] of forms) expect([...form.names].sort()).toEqual(Object.keys(schema.properties as object).sort());
    expect(ROUTE_REQUEST_FORM.required).toBe(0b11); // country, currency
    expect(OUTCOME_REPORT_FORM.required).toBe(0b1111); // rule_id, processor_id, success, latency_ms
    expect(() => new PlainForm([new PlainField('a', PlainKind.Id)], ['b'], () => ({}))).toThrow(/"b" is not one of the fields/);
    // A word is compared with its closing quote, four bytes to a number, the first byte lowest.
    const card = new QuotedWord('card');
    expect(card.size).toBe(5);
    expect(card.groups).toEqual([0x63 | (0x61 << 8) | (0x72 << 16) | (0x64 << 24), 0x22]);
    expect(new QuotedWord('one_time').groups).toHaveLength(3);
    for (const bad of ['a"b', 'a\\b', 'caf\u00e9', 'tab\t']) expect(() => new QuotedWord(bad), bad).toThrow(/not plain ASCII/);
  });

  it('decodes the bodies clients send: the documented examples, the benchmark\'s, every literal and spacing', () => {
    const texts = [
      JSON.stringify(routeExample),
      JSON.stringify(outcomeExample),
      ...routeRequests(sampleRules(ruleSet(1000), 50), 5).map((q) => q.body),
      '{"country":"us","currency":"usd","amount":null,"amount_tier":null,"transaction_id":"tx:1-2_3.4"}',
      ' {\n\t"currency" : "EUR" ,\r\n "country" : "FR", "amount_tier": "high_value", "amount": 0.1 }  ',
      '{"rule_id":"r1","processor_id":"p","success":true,"latency_ms":0,"error_code":null}',
      '{"country":"AZ","currency":"ZAZ"}', // capitals at both ends of the alphabet (found by their letters)
      '{"country":"Us","currency":"uSd"}', // letters not all capitals: through the string cache
      '{"country":"US","currency":"USD","amount":339.8298173981612}', // a computed amount: 16 significant digits
      '{"country":"US","currency":"USD","amount":0.30000000000000004,"amount_tier":null}',
      '{"rule_id":"r1","processor_id":"p","success":true,"latency_ms":120.40000000000001}',
      '{"success":false,"latency_ms":3600000,"rule_id":"r1","processor_id":"p","error_code":"","transaction_id":"t"}',
    ];
    for (const text of texts) {
      const [, form] = forms.find(([, f]) => f.names.includes(Object.keys(JSON.parse(text))[0]))!;
      const got = decode(form, text);
      expect(got, text).toBeDefined();
      expectSameFields(form, text, got);
    }
  });

  it('decodes a transaction id, new in every body, beside repeated values, without the string cache', () => {
    for (const [, form] of forms) {
      for (const f of form.fields) expect(f.cached, `${f.name} cached`).toBe(f.name !== 'transaction_id');
    }
    // Bodies as production sends them: the same rule ids and countries again and again, a
    // transaction id never seen before in each; every field as JSON.parse reads it.
    const rules = sampleRules(ruleSet(1000), 20);
    for (let i = 0; i < 3000; i++) {
      const r = rules[i % rules.length];
      const tx = `tx_${(i * 7919).toString(36)}.${i}:${'x'.repeat(i % 90)}`;
      const route = JSON.stringify({ country: r.attributes[0] === '*' ? 'ZZ' : r.attributes[0], currency: r.attributes[1], transaction_id: tx });
      const outcome = JSON.stringify({ rule_id: r.rule_id, processor_id: r.primary_id, success: i % 3 > 0, latency_ms: i, error_code: null, transaction_id: tx });
      expectSameFields(ROUTE_REQUEST_FORM as PlainForm<unknown>, route, decode(ROUTE_REQUEST_FORM, route));
      expectSameFields(OUTCOME_REPORT_FORM as PlainForm<unknown>, outcome, decode(OUTCOME_REPORT_FORM, outcome));
    }
  });

  it('declines what is not in the plain form or what the schema refuses', () => {
    const route = (extra: string) => `{"country":"US","currency":"USD"${extra}}`;
    for (const text of [
      '',
      '[]',
      '{}', // country and currency are required
      '{"country":"US"}',
      route(',"country":"FR"'), // repeated
      route(',"other":1'), // unknown field
      route(',"__proto__":{}'),
      '{"country":"U1","currency":"USD"}',
      '{"country":"@A","currency":"USD"}', // the bytes either side of A-Z and a-z
      '{"country":"A[","currency":"USD"}',
      '{"country":"US","currency":"U`D"}',
      '{"country":"US","currency":"US{"}',
      '{"country":"USA","currency":"USD"}',
      '{"country":"US","currency":"US"}',
      '{"country":"U\\u0053","currency":"USD"}', // an escape: JSON.parse decides
      '{"country":"\u00c9S","currency":"USD"}',
      route(',"payment_method":"cash"'),
      route(',"payment_method":null'),
      route(',"card_type":""'),
      route(`,"card_type":"${'v'.repeat(65)}"`),
      route(',"transaction_type":"ONE_TIME"'),
      route(',"amount":-1'),
      route(',"amount":1e3'),
      route(',"amount":1000000000000001'),
      route(',"amount":"42"'),
      route(',"amount_tier":"huge"'),
      route(',"transaction_id":"a b"'),
      route(`,"transaction_id":"${'t'.repeat(129)}"`),
      route(',"transaction_id":""'),
      route(',"country2":"US"'),
      // Names, choices and codes are matched where they stand (one pass): a prefix, a longer
      // word, an escape or a byte past ASCII in the middle of one is not taken for it.
      route(',"amoun":1'),
      route(',"amount_":1'),
      '{"countr\\y":"US","currency":"USD"}',
      '{"country":"US","currency":"USD","payment_method":"car"}',
      '{"country":"US","currency":"USD","payment_method":"cards"}',
      '{"country":"US","currency":"USD","payment_method":"c\\u0061rd"}',
      '{"country":"U"S","currency":"USD"}',
      '{"country":"US\\","currency":"USD"}',
      route(',"transaction_id":"t\u00e9"'),
      route(',"transaction_id":"t\\"'),
      route(',"transaction_id":"t'),
      '{"country":"US","currency":"USD",}',
      '{"country":"US","currency":"USD"',
      '{"country":"US","currency":"USD"}x', // trailing garbage
      '{"rule_id":"r1","processor_id":"p","success":"true","latency_ms":1}',
      '{"rule_id":"r1","processor_id":"p","success":true,"latency_ms":3600001}',
      '{"rule_id":"r1","processor_id":"p","success":true}',
      '{"rule_id":"r1","processor_id":"p","success":true,"latency_ms":1,"error_code":1}',
      `{"rule_id":"r1","processor_id":"p","success":true,"latency_ms":1,"error_code":"${'e'.repeat(129)}"}`,
    ]) {
      for (const [, form] of forms) expect(decode(form, text), text).toBeUndefined();
    }
  });

  for (const [name, form, schema, plainObject] of forms) {
    const check = TypeCompiler.Compile(schema);
    const value = fc.oneof(
      fc.stringMatching(/^[ -~]{0,70}$/), // printable ASCII, quotes and backslashes included
      fc.constantFrom('US', 'us', 'U1', 'USD', 'usd', 'card', 'wallet', 'bnpl', 'recurring', 'micro', 'premium', 'r1', 'p:1', '', 'a b', 'visa'),
      fc.string({ unit: 'binary', maxLength: 8 }),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.constantFrom(0, -1, 42, 0.1, 1e15, 1e16, 3_600_000, 3_600_001, 123.456789012345),
      fc.boolean(),
      fc.constant(null),
      fc.constant([]),
    );
    const body = fc.dictionary(fc.constantFrom(...form.names, 'other'), value);
    const spacing = fc.constantFrom('', ' ', '\n', '\t ');

    it(`${name}: what it decodes is what JSON.parse gives and the schema accepts; a plain parsed body it decodes too (generated bodies)`, () => {
      fc.assert(
        fc.property(body, spacing, (b, sp) => {
          const text = sp + JSON.stringify(b, null, sp.trim() === '' && sp !== '' ? sp : undefined) + sp;
          const got = decode(form, text);
          const parsed = JSON.parse(text) as unknown;
          if (got !== undefined) {
            expect(check.Check(parsed), text).toBe(true);
            expectSameFields(form, text, got);
          } else if (plainObject(parsed) && /^[\x20-\x7e\s]*$/.test(text) && !text.includes('\\') && Object.values(b).every(writtenPlainly)) {
            // a body the plain check takes, written without escapes, is decoded
            throw new Error(`declined a plain body: ${text}`);
          }
        }),
        { numRuns: 20000 },
      );
    });

    it(`${name}: never decodes text JSON.parse refuses, and agrees with it otherwise (arbitrary text)`, () => {
      const text = fc.oneof(fc.string(), fc.json(), fc.stringMatching(/^\{("(country|currency|amount|success|rule_id|latency_ms)":(-?[0-9.eE+-]{1,8}|"[a-zA-Z\\"]{0,4}"|true|false|null|\{\}),?){0,4}\}$/));
      fc.assert(
        fc.property(text, (t) => {
          const got = decode(form, t);
          if (got === undefined) return;
          let parsed: unknown;
          expect(() => (parsed = JSON.parse(t)), t).not.toThrow();
          expect(check.Check(parsed)).toBe(true);
          expectSameFields(form, t, got);
        }),
        { numRuns: 20000 },
      );
    });
  }
});
