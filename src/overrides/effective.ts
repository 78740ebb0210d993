/**
 * Which operator override governs a rule's traffic, computed when overrides or rules change
 * (never per request) and kept on the live rule, where the route path reads it.
 *
 * Precedence: the rule's own override (pin or drain) wins over a tenant-wide processor drain
 * (it is the more specific instruction). A drain needs somewhere else to send the traffic: a
 * self-fallback rule (one processor) cannot be drained, and a rule whose two processors are
 * both drained tenant-wide keeps routing as the engine decides (the health view still shows
 * no override for it). Pinning a self-fallback rule to its processor changes nothing but is shown.
 */
import type { Override } from '../schemas/overrides.js';

/**
 * The part of a rule an override is judged against (a RuleRecord satisfies it). Stated here
 * rather than imported, since the tenant's state (tenants/tenant.ts) imports this module.
 */
export interface RuleProcessors {
  readonly primary_id: string;
  readonly secondary_id: string;
}

/** An override as stored and shown (`decision.override`, `GET /v1/overrides`): the Override schema's shape. */
export type OverrideRecord = Override;
export type OverrideMode = Override['mode'];

/** What the route path applies: the primary's share (0 or 1) while the override lasts. */
export interface ActiveOverride {
  primaryShare: number;
  record: OverrideRecord;
}

export function effectiveOverride(
  rule: RuleProcessors,
  ruleOverride: OverrideRecord | undefined,
  drains: ReadonlyMap<string, OverrideRecord>,
): ActiveOverride | null {
  const same = rule.primary_id === rule.secondary_id;
  if (ruleOverride !== undefined) {
    const k = ruleOverride.processor_id === rule.primary_id ? 0 : ruleOverride.processor_id === rule.secondary_id ? 1 : -1;
    if (k >= 0 && !(same && ruleOverride.mode === 'drain')) {
      const towardsPrimary = (k === 0) === (ruleOverride.mode === 'pin');
      return { primaryShare: towardsPrimary ? 1 : 0, record: ruleOverride };
    }
  }
  if (same || drains.size === 0) return null;
  const dp = drains.get(rule.primary_id);
  const ds = drains.get(rule.secondary_id);
  if (dp !== undefined && ds === undefined) return { primaryShare: 0, record: dp };
  if (ds !== undefined && dp === undefined) return { primaryShare: 1, record: ds };
  return null;
}
