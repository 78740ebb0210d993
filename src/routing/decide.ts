/**
 * The route decision (front thread, per request): trie walk, the rule's decision fields (its
 * route cache, or a seqlocked read of its rows when they moved), one random draw. No await, no
 * store access, no message to another thread.
 */
import { decisionEpoch, readDecision, type DecisionFields } from '../shm/decision.js';
import { DECISION_SOURCE_NAMES, DecisionSource } from '../shm/layout.js';
import { ruleIndex, ruleSegment, ruleSegmentNumber } from '../shm/slots.js';
import type { SharedTables } from '../shm/tables.js';
import type { RouteDecision, RouteRequest } from '../schemas/routing.js';
import type { LiveRule, Tenant } from '../tenants/tenant.js';
import { deriveAmountTier } from './amount-tier.js';
import { shownFailureProbability } from '../tiers/foresight/prior.js';
import { WILDCARD } from './attributes.js';
import { STALE_EPOCH, type RuleCache } from './rule-cache.js';
import type { ActiveOverride } from '../overrides/effective.js';

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

/** The route cache of the rule that matches the request (routing/rule-cache.ts), or undefined. */
export function matchRoute(tenant: Tenant, req: RouteRequest): RuleCache<LiveRule> | undefined {
  return tenant.trie.match(transactionValues(req));
}

/**
 * The side a route of the rule takes: 0 the primary, 1 the secondary. Reads the rule's decision
 * fields from its route cache, or from its shared-memory rows (seqlocked) when the segment's
 * decision epoch moved since the cache last read them, with an operator override applied;
 * draws against the primary's share and counts the route for the per-rule metrics (in the
 * cache: shm/rule-counts.ts adds it to the row). The cache holds what pickedDecision() and
 * the replies (http/json-writers.ts routeReplyBytes) read until the rule's next route.
 */
export function pickSide(tables: SharedTables, route: RuleCache<LiveRule>, random: number): number {
  const epoch = decisionEpoch(tables.decisionEpochs, ruleSegmentNumber(route.slot));
  if (epoch !== route.epoch) readRows(tables, route, epoch);
  let side: number;
  if (random < route.share) {
    side = 0;
    route.routedPrimary++;
  } else {
    side = 1;
    route.routedSecondary++;
  }
  if (!route.queued) tables.ruleCounts.queue(route);
  return side;
}

/** The cache's decision fields read again from the rule's rows: the replies stay when the values did not change. */
function readRows(tables: SharedTables, c: RuleCache<LiveRule>, epoch: number): void {
  const seg = ruleSegment(tables.ruleSegs, c.slot);
  readDecision(seg, ruleIndex(c.slot), fields);
  // An operator override beats every tier while it lasts (reported as `rules`); null = none.
  const override = c.rule.override;
  if (override != null) {
    fields.primaryShare = override.primaryShare;
    fields.source = DecisionSource.Rules;
  }
  if (
    !sameNumber(c.share, fields.primaryShare) ||
    c.source !== fields.source ||
    !sameNumber(c.failProbPrimary, fields.failProbPrimary) ||
    !sameNumber(c.failProbSecondary, fields.failProbSecondary)
  ) {
    c.share = fields.primaryShare;
    c.source = fields.source;
    c.failProbPrimary = fields.failProbPrimary;
    c.failProbSecondary = fields.failProbSecondary;
    c.repliesCurrent = false;
  }
  c.epoch = epoch;
}

/**
 * Puts `override` in force on the rule (null: none), for its next route: the one way to set a
 * LiveRule's override, since a change of it moves no decision epoch.
 */
export function applyOverride(rule: LiveRule, override: ActiveOverride | null): void {
  rule.override = override;
  if (rule.cache !== null) rule.cache.epoch = STALE_EPOCH;
}

/** Equal numbers, NaN equal to NaN (a failure probability is NaN while Tier 2 has no estimate). */
function sameNumber(a: number, b: number): boolean {
  return a === b || (a !== a && b !== b);
}

/**
 * The decision of the last pickSide() of the rule, taking `side`. `predictionEnabled`: the
 * tenant's Tier 2 switch (failure_probability is null only when it is off). A scratch object
 * valid until the next call (no allocation per route): read it or copy it before routing again.
 */
export function pickedDecision(route: RuleCache<LiveRule>, side: number, predictionEnabled: boolean): RouteDecision {
  const rec = route.rule.record;
  const primary = side === 0;
  const share = route.share;
  decision.processor_id = primary ? rec.primary_id : rec.secondary_id;
  decision.weight = round4(primary ? share : 1 - share);
  decision.fallback_processor_id = primary ? rec.secondary_id : rec.primary_id;
  decision.decision_source = DECISION_SOURCE_NAMES[route.source] ?? 'rules';
  decision.failure_probability = shownFailureProbability(primary ? route.failProbPrimary : route.failProbSecondary, predictionEnabled);
  decision.rule_id = rec.rule_id;
  return decision;
}

/** pickSide() and pickedDecision() in one: the route decision (a scratch object, as pickedDecision's). */
export function decide(tables: SharedTables, route: RuleCache<LiveRule>, random: number, predictionEnabled: boolean): RouteDecision {
  return pickedDecision(route, pickSide(tables, route, random), predictionEnabled);
}

function round4(x: number): number {
  return Math.round(x * 10000) / 10000;
}
