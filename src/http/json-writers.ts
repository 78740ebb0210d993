/**
 * Hand-written JSON for the fixed reply shapes of the hot path (the route decision, the
 * outcome acknowledgement): string concatenation in field order instead of JSON.stringify's
 * generic walk over the object. The output is byte-for-byte what JSON.stringify gives
 * (test/unit/json-writers.test.ts checks it against JSON.stringify for generated values).
 */
import { Buffer } from 'node:buffer';
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

/**
 * The last route reply written in one slot of the memo below. A class whose fields hold their
 * final kinds from the start (a weight is a fraction, a failure probability a number or null):
 * a field that first held 1 and then 0.9, or null and then 0.03, changes the object's layout,
 * and V8 throws away the optimised code that read the old one, the route handler's included.
 */
class WrittenReply {
  processor = '';
  weight = Number.NaN;
  fallback = '';
  source = '';
  failProb: number | null = Number.NaN;
  ruleId = '';
  /** The reply's JSON, UTF-8 encoded once: uWS sends bytes as they are, where a string is measured and converted on every send. */
  bytes = Buffer.alloc(0);
}
// failProb holds null as well as numbers: both kinds are stored once here, at load, so the
// first null stored under traffic changes nothing.
new WrittenReply().failProb = null;

/** A power of two; a rule side maps to slot (key & (REPLY_SLOTS - 1)), so two may share one (then each rebuilds). */
const REPLY_SLOTS = 8192;
const written: (WrittenReply | undefined)[] = new Array<WrittenReply | undefined>(REPLY_SLOTS).fill(undefined);

/**
 * routeDecisionJson(d) as UTF-8 bytes, reusing the bytes written last time for the same `key`
 * (the rule's slot and chosen side) when every field is unchanged. A rule's weight and failure
 * probability move once per evaluation cycle, not per request, so nearly every route of a rule
 * writes what the one before wrote: reusing it saves building the string (about 700 bytes of
 * garbage per route, which at 100,000 rules pushes the trie out of the cache) and uWS's
 * measuring and encoding of it. All six fields are compared, so a stale reply is never sent
 * whatever the key.
 */
export function routeReplyBytes(d: RouteDecision, key: number): Buffer {
  const slot = key & (REPLY_SLOTS - 1);
  const w = written[slot];
  if (
    w !== undefined &&
    w.weight === d.weight &&
    w.failProb === d.failure_probability &&
    w.source === d.decision_source &&
    w.processor === d.processor_id &&
    w.fallback === d.fallback_processor_id &&
    w.ruleId === d.rule_id
  ) {
    return w.bytes;
  }
  const bytes = Buffer.from(routeDecisionJson(d), 'utf8');
  // One path for a new slot and a changed reply: a branch first taken when a rule's weights
  // move (at a cycle, under load) would deoptimise the route handler this is inlined into.
  const into = w ?? (written[slot] = new WrittenReply());
  into.processor = d.processor_id;
  into.weight = d.weight;
  into.fallback = d.fallback_processor_id;
  into.source = d.decision_source;
  into.failProb = d.failure_probability;
  into.ruleId = d.rule_id;
  into.bytes = bytes;
  return bytes;
}

/**
 * The 202 body of POST /v1/outcome, one constant per classification, as bytes: uWS copies a
 * string answer through a UTF-8 conversion into a malloc'd buffer on every end(), a Buffer it
 * reads in place (outcome profile: Utf8Length and malloc/free, ~2% of the request's CPU).
 */
export const OUTCOME_ACCEPTED_BYTES: Readonly<Record<string, Buffer>> = Object.freeze(
  Object.fromEntries(['success', 'decline', 'technical_error'].map((c) => [c, Buffer.from(JSON.stringify({ status: 'accepted', classification: c }), 'utf8')])),
);
