/**
 * A tenant's in-memory state on the front thread: its rules, the trie that routes over them,
 * the rule slots the engine evaluates, and its counters. Everything a request needs is here,
 * so routing never touches the store.
 */
import { RuleTrie } from '../routing/trie.js';
import type { ActiveOverride, OverrideRecord } from '../overrides/effective.js';
import type { ErrorCodeOverrides } from '../routing/classify.js';
import { RuleCache } from '../routing/rule-cache.js';
import { NO_OVERRIDES } from '../routing/classify.js';
import type { Tier1Config } from '../tiers/tier1/config.js';

export interface RuleRecord {
  rule_id: string;
  attributes: string[]; // six, normalized, padded with '*'
  primary_id: string;
  primary_name: string;
  secondary_id: string;
  secondary_name: string;
  primary_weight: number;
  created_at: string; // ISO 8601 UTC
  /** Last PATCH, ISO 8601 UTC; absent until the rule is first changed. */
  updated_at?: string;
}

export interface LiveRule {
  record: RuleRecord;
  slot: number; // rule slot in the shared tables
  /**
   * Front thread only: when the first payment of each processor's current technical-failure run
   * started (ms). Null until the rule's first technical failure (reads as [0, 0]): most rules
   * never have one, and two numbers in an array cost 64 bytes a rule.
   */
  runStartedAt: [number, number] | null;
  /** The operator override in force (src/overrides), null when none: the route path applies it. */
  override?: ActiveOverride | null;
  /** What its routes and outcomes read, made at its first route or outcome (routing/rule-cache.ts). */
  cache: RuleCache<LiveRule> | null;
}

/** The rule's cache (made at the first call: the rules that take traffic get theirs side by side). */
export function cacheOf(rule: LiveRule): RuleCache<LiveRule> {
  return rule.cache ?? (rule.cache = new RuleCache(rule, rule.slot, rule.record.primary_id, rule.record.secondary_id));
}

export interface TenantCounters {
  routed: number;
  reported: number;
  failovers: number;
}

/** Per-tenant engine switches (spec 2.10); the tier follows from them. */
export interface TierSettings {
  predictionEnabled: boolean;
  banditEnabled: boolean;
  shadowMode: boolean;
}

export function tierOf(s: TierSettings): 1 | 2 | 3 {
  return !s.predictionEnabled ? 1 : !s.banditEnabled ? 2 : 3;
}

export function settingsForTier(tier: 1 | 2 | 3, shadowMode: boolean): TierSettings {
  return { predictionEnabled: tier >= 2, banditEnabled: tier >= 3, shadowMode };
}

export class Tenant {
  readonly rules = new Map<string, LiveRule>();
  /**
   * The caches of the rules that have had an outcome, by the rule_id string of their first one
   * (Tenant.outcomeCache): what an outcome looks its rule up in. Its entries are the rules that
   * take traffic, made as outcomes come, so its table is small and in cache where `rules`, at
   * 100,000 rules, is not; and the body decoder gives the same string for the same id, so a key
   * is found without comparing its characters. At most one entry per rule: addRule and
   * removeRule drop a rule's.
   */
  private readonly outcomeCaches = new Map<string, RuleCache<LiveRule>>();
  /** Answers a rule's cache (made when a tuple first finds the rule), not the rule: see routing/rule-cache.ts. */
  readonly trie = new RuleTrie<LiveRule, RuleCache<LiveRule>>(cacheOf);
  counters: TenantCounters = { routed: 0, reported: 0, failovers: 0 };
  errorCodes: ErrorCodeOverrides = NO_OVERRIDES;
  /** Tier 1 threshold overrides the tenant configured (validated when set). */
  tier1Overrides: Partial<Tier1Config> = {};
  /** Tier 2 / Tier 3 overrides (action threshold, half-life...), validated when set. */
  foresightOverrides: Partial<Record<'actionThreshold' | 'shiftGain' | 'minPrimaryShare' | 'confirmSteps', number>> = {};
  banditOverrides: Record<string, number> = {};
  /** The tenant's own request rate limit (POST /v1/config/tiers); null = SERVICE_RATE_LIMIT_RPS. */
  rateLimitRps: number | null = null;
  /** Rule ids being created right now (reserved before the store write resolves). */
  readonly pending = new Set<string>();
  /** Attribute keys of rules being created right now → their rule id. */
  readonly pendingAttributes = new Map<string, string>();
  /** Operator overrides in force: per rule id, and tenant-wide drains per processor id. */
  readonly ruleOverrides = new Map<string, OverrideRecord>();
  readonly processorDrains = new Map<string, OverrideRecord>();
  /** Rule ids being deleted right now. */
  readonly deleting = new Set<string>();
  private slotCache: Int32Array | null = null;
  /**
   * Bumped whenever a rule is added or removed (a PATCH is both): whoever keeps a copy of the
   * rule list (the metrics render thread's label catalogue) knows when it is stale.
   */
  rulesVersion = 0;

  constructor(
    readonly id: string,
    public settings: TierSettings,
  ) {}

  addRule(rule: LiveRule): void {
    if (!this.trie.insert(rule.record.attributes, rule)) {
      throw new Error(`rule ${rule.record.rule_id}: attributes already taken`); // callers check first
    }
    this.rules.set(rule.record.rule_id, rule);
    this.outcomeCaches.delete(rule.record.rule_id); // the rule it replaces had its own cache
    this.slotCache = null;
    this.rulesVersion++;
  }

  removeRule(ruleId: string): LiveRule | undefined {
    const rule = this.rules.get(ruleId);
    if (!rule) return undefined;
    this.rules.delete(ruleId);
    this.outcomeCaches.delete(ruleId);
    if (this.trie.get(rule.record.attributes) === rule) this.trie.remove(rule.record.attributes);
    this.slotCache = null;
    this.rulesVersion++;
    return rule;
  }

  /** The cache of rule `ruleId` for an outcome (see outcomeCaches), or undefined when the tenant has no such rule. */
  outcomeCache(ruleId: string): RuleCache<LiveRule> | undefined {
    let cache = this.outcomeCaches.get(ruleId);
    if (cache === undefined) {
      const rule = this.rules.get(ruleId);
      if (rule === undefined) return undefined;
      this.outcomeCaches.set(ruleId, (cache = cacheOf(rule)));
    }
    return cache;
  }

  /**
   * The rule slots the engine evaluates for this tenant (cached until rules change). A plain
   * loop: `Int32Array.from(values, mapFn)` takes V8's generic iterator path, ~2 ms per 20,000
   * rules however hot, and the cycle builds this on the front thread (12 ms of routes held at
   * 100,000 rules); the loop takes ~0.1 ms once optimised.
   */
  slots(): Int32Array {
    if (!this.slotCache) {
      const slots = new Int32Array(this.rules.size);
      let i = 0;
      for (const rule of this.rules.values()) slots[i++] = rule.slot;
      this.slotCache = slots;
    }
    return this.slotCache;
  }
}
