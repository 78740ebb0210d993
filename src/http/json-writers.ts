/**
 * Hand-written JSON for the fixed reply shapes of the hot path (the route decision, the
 * outcome acknowledgement): string concatenation in field order instead of JSON.stringify's
 * generic walk over the object. The output is byte-for-byte what JSON.stringify gives
 * (test/unit/hot-path-codecs.test.ts checks it against JSON.stringify for generated values).
 */
import { Buffer } from 'node:buffer';
import { pickedDecision } from '../routing/decide.js';
import type { RuleCache } from '../routing/rule-cache.js';
import type { RouteDecision } from '../schemas/routing.js';
import type { LiveRule } from '../tenants/tenant.js';

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
 * The reply of a route of the rule taking `side` (0 primary, 1 secondary), as UTF-8 bytes: those
 * written last time for the rule when its route cache says they are still those of its decision
 * fields (pickSide() keeps it so) and the tenant's Tier 2 switch is unchanged, else both sides'
 * replies written anew (routeDecisionJson of pickedDecision). Reusing them saves building the
 * string (about 700 bytes of garbage per route) and uWS's measuring and encoding of it, and
 * leaves the rule's record and id strings unread (see routing/rule-cache.ts). A rule's ids
 * never change: a PATCH makes a new LiveRule.
 */
export function routeReplyBytes(route: RuleCache<LiveRule>, side: number, predictionEnabled: boolean): Buffer {
  if (route.repliesCurrent && route.predictionEnabled === predictionEnabled) return side === 0 ? route.primary : route.secondary;
  return writeReplies(route, predictionEnabled, side);
}

/** One path for a rule's first route and a changed decision: a branch first taken at a cycle, under load, would deoptimise the handler. */
function writeReplies(route: RuleCache<LiveRule>, predictionEnabled: boolean, side: number): Buffer {
  route.predictionEnabled = predictionEnabled;
  route.primary = Buffer.from(routeDecisionJson(pickedDecision(route, 0, predictionEnabled)), 'utf8');
  route.secondary = Buffer.from(routeDecisionJson(pickedDecision(route, 1, predictionEnabled)), 'utf8');
  route.repliesCurrent = true;
  return side === 0 ? route.primary : route.secondary;
}

/**
 * The 202 body of POST /v1/outcome, one constant per classification, as bytes: uWS copies a
 * string answer through a UTF-8 conversion into a malloc'd buffer on every end(), a Buffer it
 * reads in place (outcome profile: Utf8Length and malloc/free, ~2% of the request's CPU).
 */
export const OUTCOME_ACCEPTED_BYTES: Readonly<Record<string, Buffer>> = Object.freeze(
  Object.fromEntries(['success', 'decline', 'technical_error'].map((c) => [c, Buffer.from(JSON.stringify({ status: 'accepted', classification: c }), 'utf8')])),
);
