/**
 * Hand-written JSON for the fixed reply shapes of the hot path (the route decision, the
 * outcome acknowledgement): string concatenation in field order instead of JSON.stringify's
 * generic walk over the object. The output is byte-for-byte what JSON.stringify gives
 * (test/unit/json-writers.test.ts checks it against JSON.stringify for generated values).
 */
import type { RouteDecision } from '../schemas/routing.js';

/** Characters JSON.stringify escapes in strings: '"', '\', control characters, lone surrogates. */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** A JSON string literal; identifiers (letters, digits, _ . : -) take the plain branch. */
export function jsonString(s: string): string {
  return NEEDS_ESCAPE.test(s) ? JSON.stringify(s) : `"${s}"`;
}

/** JSON.stringify writes non-finite numbers as null. */
const jsonNumber = (x: number): string => (Number.isFinite(x) ? String(x) : 'null');

export function routeDecisionJson(d: RouteDecision): string {
  return (
    `{"processor_id":${jsonString(d.processor_id)},"weight":${jsonNumber(d.weight)}` +
    `,"fallback_processor_id":${jsonString(d.fallback_processor_id)},"decision_source":"${d.decision_source}"` +
    `,"failure_probability":${d.failure_probability === null ? 'null' : jsonNumber(d.failure_probability)}` +
    `,"rule_id":${jsonString(d.rule_id)}}`
  );
}

/** The 202 body of POST /v1/outcome, one constant string per classification. */
export const OUTCOME_ACCEPTED_JSON: Readonly<Record<string, string>> = Object.freeze(
  Object.fromEntries(['success', 'decline', 'technical_error'].map((c) => [c, JSON.stringify({ status: 'accepted', classification: c })])),
);
