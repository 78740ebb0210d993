/**
 * The hot path's shortcuts must never change an answer: the hand-written JSON equals
 * JSON.stringify's, and the plain-body checks accept only what the compiled schema accepts
 * (anything else takes the full check, whose verdict and messages are the contract).
 */
import fc from 'fast-check';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { describe, expect, it } from 'vitest';
import { jsonString, OUTCOME_ACCEPTED_BYTES, routeDecisionJson, routeReplyBytes } from '../../src/http/json-writers.js';
import { plainOutcomeReport, plainRouteRequest } from '../../src/schemas/hot-bodies.js';
import { OutcomeReport, RouteRequest } from '../../src/schemas/routing.js';

const routeCheck = TypeCompiler.Compile(RouteRequest);
const outcomeCheck = TypeCompiler.Compile(OutcomeReport);

describe('hand-written JSON', () => {
  it('writes the route decision exactly as JSON.stringify does', () => {
    const num = fc.oneof(fc.double({ noNaN: false }), fc.constantFrom(0, -0, 1, 0.9, 0.1234, 1e-7, 5e-324));
    fc.assert(
      fc.property(
        fc.record({
          processor_id: fc.string({ unit: 'binary' }),
          weight: num,
          fallback_processor_id: fc.string(),
          decision_source: fc.constantFrom('rules' as const, 'prediction' as const, 'mab' as const),
          failure_probability: fc.option(num, { nil: null }),
          rule_id: fc.stringMatching(/^[A-Za-z0-9_.:-]{1,20}$/),
        }),
        (d) => {
          const text = routeDecisionJson(d);
          expect(text).toBe(JSON.stringify(d));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('reuses a route reply only when every field is unchanged', () => {
    const decision = fc.record({
      processor_id: fc.constantFrom('p1', 'p2', 'p"3'),
      weight: fc.constantFrom(0, -0, 0.1, 0.9, 1, NaN),
      fallback_processor_id: fc.constantFrom('p1', 'p2'),
      decision_source: fc.constantFrom('rules' as const, 'prediction' as const, 'mab' as const),
      failure_probability: fc.constantFrom(null, 0, 0.02, 0.5),
      rule_id: fc.constantFrom('r1', 'r2'),
    });
    // Few keys and few values: the same key meets both equal and changed decisions.
    fc.assert(
      fc.property(fc.array(fc.tuple(decision, fc.constantFrom(0, 1, 8192, 16385)), { maxLength: 40 }), (steps) => {
        for (const [d, key] of steps) expect(routeReplyBytes(d, key).toString('utf8')).toBe(JSON.stringify(d));
      }),
      { numRuns: 2000 },
    );
    // A scratch decision object changed in place between calls is re-read, not trusted.
    const d = { processor_id: 'p1', weight: 0.9, fallback_processor_id: 'p2', decision_source: 'rules' as const, failure_probability: null, rule_id: 'r9' };
    expect(routeReplyBytes(d, 7).toString('utf8')).toBe(JSON.stringify(d));
    d.weight = 0.8;
    expect(routeReplyBytes(d, 7).toString('utf8')).toBe(JSON.stringify(d));
  });

  it('escapes what JSON.stringify escapes', () => {
    for (const s of ['plain', 'quo"te', 'back\\slash', 'tab\t', '\u0000', '\ud800', 'a\udc00', '😀', '\u2028']) expect(jsonString(s)).toBe(JSON.stringify(s));
  });

  it('has the outcome acknowledgement for every classification', () => {
    for (const c of ['success', 'decline', 'technical_error']) expect(JSON.parse(OUTCOME_ACCEPTED_BYTES[c].toString('utf8'))).toEqual({ status: 'accepted', classification: c });
  });
});

describe('plain hot bodies', () => {
  const anyValue = fc.oneof(
    fc.string(),
    fc.constantFrom('US', 'us', 'U1', 'USD', 'usd', 'card', 'wallet', 'bnpl', 'recurring', 'micro', 'premium', 'r1', 'p:1', '', 'a b'),
    fc.double(),
    fc.constantFrom(0, -1, 42, 1e15, 1e16, 3_600_000, 3_600_001),
    fc.boolean(),
    fc.constant(null),
    fc.constant([]),
    fc.constant({}),
  );
  const routeKeys = ['country', 'currency', 'payment_method', 'card_type', 'transaction_type', 'amount', 'amount_tier', 'transaction_id', 'other'];
  const outcomeKeys = ['rule_id', 'processor_id', 'success', 'latency_ms', 'error_code', 'transaction_id', 'other'];

  it('accepts only route bodies the schema accepts, and the usual ones', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom(...routeKeys), anyValue), (body) => {
        if (plainRouteRequest(body)) expect(routeCheck.Check(body)).toBe(true);
      }),
      { numRuns: 20000 },
    );
    const usual = { country: 'us', currency: 'USD', payment_method: 'card', card_type: 'visa', transaction_type: 'one_time', amount: 42 };
    expect(plainRouteRequest(usual)).toBe(true);
    expect(plainRouteRequest({ country: 'US', currency: 'EUR', amount_tier: null, amount: null })).toBe(true);
    expect(plainRouteRequest({ country: 'US' })).toBe(false);
    expect(plainRouteRequest({ ...usual, country: 'U1' })).toBe(false);
  });

  it('accepts only outcome bodies the schema accepts, and the usual ones', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom(...outcomeKeys), anyValue), (body) => {
        if (plainOutcomeReport(body)) expect(outcomeCheck.Check(body)).toBe(true);
      }),
      { numRuns: 20000 },
    );
    const usual = { rule_id: 'r1', processor_id: 'stripe_us', success: false, latency_ms: 120, error_code: 'do_not_honor' };
    expect(plainOutcomeReport(usual)).toBe(true);
    expect(plainOutcomeReport({ ...usual, error_code: null })).toBe(true);
    expect(plainOutcomeReport({ ...usual, latency_ms: -1 })).toBe(false);
    expect(plainOutcomeReport({ ...usual, rule_id: 'r 1' })).toBe(false);
  });
});
