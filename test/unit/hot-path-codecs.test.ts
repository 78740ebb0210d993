/**
 * The hot path's shortcuts must never change an answer: the hand-written JSON equals
 * JSON.stringify's, and the plain-body checks accept only what the compiled schema accepts
 * (anything else takes the full check, whose verdict and messages are the contract).
 */
import fc from 'fast-check';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { describe, expect, it } from 'vitest';
import { jsonString, OUTCOME_ACCEPTED_BYTES, routeDecisionJson } from '../../src/http/json-writers.js';
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
