/**
 * The route decision (front thread, per request): trie walk, one seqlocked read of the
 * rule's decision fields, one random draw. No await, no store access, no message to another
 * thread.
 */
import { readDecision, type DecisionFields } from '../shm/decision.js';
import { DECISION_SOURCE_NAMES, DecisionSource, RF_ROUTED, RULE_F64_STRIDE } from '../shm/layout.js';
import type { SharedTables } from '../shm/tables.js';
import type { RouteDecision, RouteRequest } from '../schemas/routing.js';
import type { LiveRule, Tenant } from '../tenants/tenant.js';
import { deriveAmountTier } from './amount-tier.js';
import { shownFailureProbability } from '../tiers/foresight/prior.js';
import { WILDCARD } from './attributes.js';
import { ruleIndex, ruleSegment } from '../shm/slots.js';

// Reused across calls: the front thread is single-threaded and decide() is synchronous. Their
// number fields start as fractions (NaN), and failure_probability has held a number and null,
// so the values a cycle brings (a share of 1 becoming 0.9, null becoming 0.03) never change
// the objects' layout under load, which would throw away the route handler's optimised code.
const values: (string | null)[] = [null, null, null, null, null, null];
const fields: DecisionFields = { primaryShare: NaN, source: DecisionSource.Rules, failProbPrimary: NaN, failProbSecondary: NaN };
/** What decide() returns: one object, overwritten by the next call (callers read or copy it at once). */
const decision: RouteDecision = { processor_id: '', weight: NaN, fallback_processor_id: '', decision_source: 'rules', failure_probability: NaN, rule_id: '' };
decision.failure_probability = null;

/** Whether s has no character in the range a-z / A-Z (`from`-`to`) and only ASCII: then s is its own upper / lower case. */
function asciiWithout(s: string, from: number, to: number): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c > 0x7f || (c >= from && c <= to)) return false;
  }
  return true;
}
// The usual values are already in their case: kept as they are (toUpperCase() and
// toLowerCase() return a new string every time, garbage on every route).
const upper = (s: string) => (asciiWithout(s, 0x61, 0x7a) ? s : s.toUpperCase());
const lower = (s: string) => (asciiWithout(s, 0x41, 0x5a) ? s : s.toLowerCase());

/** Normalizes the request into trie values; null = the transaction has no value there. */
export function transactionValues(req: RouteRequest): (string | null)[] {
  values[0] = upper(req.country);
  values[1] = upper(req.currency);
  values[2] = req.payment_method ?? 'card';
  const card = req.card_type === undefined ? undefined : lower(req.card_type);
  values[3] = card && card !== WILDCARD ? card : null;
  values[4] = req.transaction_type ?? 'one_time';
  values[5] = req.amount_tier ?? deriveAmountTier(req.amount);
  return values;
}

export function matchRule(tenant: Tenant, req: RouteRequest): LiveRule | undefined {
  return tenant.trie.match(transactionValues(req));
}

/**
 * The side a route takes for `rule`: 0 the primary, 1 the secondary. Reads the rule's decision
 * fields once (seqlocked), applies an operator override, draws against the primary's share and
 * counts the route for the per-rule metrics. The fields it read stay in `picked` until the
 * next call, for pickedDecision() and the rule's replies (http/json-writers.ts routeReplyBytes).
 */
export function pickSide(tables: SharedTables, rule: LiveRule, random: number): number {
  const seg = ruleSegment(tables.ruleSegs, rule.slot);
  const i = ruleIndex(rule.slot);
  readDecision(seg, i, fields);
  // An operator override beats every tier while it lasts (reported as `rules`); null = none.
  const override = rule.override;
  if (override != null) {
    fields.primaryShare = override.primaryShare;
    fields.source = DecisionSource.Rules;
  }
  const side = random < fields.primaryShare ? 0 : 1;
  // Per-rule traffic counter for the metrics (front thread only: a plain increment).
  seg.ruleF64[i * RULE_F64_STRIDE + RF_ROUTED + side]++;
  return side;
}

/** The decision fields the last pickSide() read (override applied): read them before routing again. */
export const picked: Readonly<DecisionFields> = fields;

/**
 * The decision of the last pickSide() of `rule`, taking `side`. `predictionEnabled`: the
 * tenant's Tier 2 switch (failure_probability is null only when it is off). A scratch object
 * valid until the next call (no allocation per route): read it or copy it before routing again.
 */
export function pickedDecision(rule: LiveRule, side: number, predictionEnabled: boolean): RouteDecision {
  const rec = rule.record;
  const primary = side === 0;
  const share = fields.primaryShare;
  decision.processor_id = primary ? rec.primary_id : rec.secondary_id;
  decision.weight = round4(primary ? share : 1 - share);
  decision.fallback_processor_id = primary ? rec.secondary_id : rec.primary_id;
  decision.decision_source = DECISION_SOURCE_NAMES[fields.source] ?? 'rules';
  decision.failure_probability = shownFailureProbability(primary ? fields.failProbPrimary : fields.failProbSecondary, predictionEnabled);
  decision.rule_id = rec.rule_id;
  return decision;
}

/** pickSide() and pickedDecision() in one: the route decision for `rule` (a scratch object, as pickedDecision's). */
export function decide(tables: SharedTables, rule: LiveRule, random: number, predictionEnabled: boolean): RouteDecision {
  return pickedDecision(rule, pickSide(tables, rule, random), predictionEnabled);
}

function round4(x: number): number {
  return Math.round(x * 10000) / 10000;
}
