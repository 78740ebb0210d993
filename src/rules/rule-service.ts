/**
 * Rules: the store is the record, the tenant's trie and the shared tables are the live
 * view. A write is acknowledged only after the store committed it; the id is reserved
 * synchronously first, so two concurrent creates of one id cannot both succeed. The store
 * decides too (insert, and the attributes as the collection's unique key), which is what
 * counts when several replicas share it: of two creates of one rule id (or of the same
 * attributes) on two replicas, one gets 201 and the other 409.
 * Changes made by other replicas arrive through the store (`syncRule`): the live view is
 * brought to what the store holds, a changed rule swapped in one synchronous step.
 */
import { errors } from '../errors.js';
import { log } from '../log.js';
import { attributeIssues, padAttributes } from '../routing/attributes.js';
import type { RuleInput, RulePatch } from '../schemas/rules.js';
import { carryEngineState } from './carry-state.js';
import { compactRecord } from './compact-record.js';
import type { OverrideService } from '../overrides/override-service.js';
import type { SharedTables } from '../shm/tables.js';
import { StoreConflict, type Collection, type Store } from '../store/store.js';
import type { LiveRule, RuleRecord, Tenant } from '../tenants/tenant.js';
import type { TenantRegistry } from '../tenants/registry.js';
import { storedRule } from './stored-rule.js';

export const DEFAULT_PRIMARY_WEIGHT = 0.9;

export interface RuleLifecycle {
  /** A rule went live (slot allocated and initialised). */
  created?(tenant: Tenant, ruleId: string, slot: number): void;
  /** Frees a deleted rule's slot once no evaluation is reading it. */
  release(tenant: Tenant, slot: number): void;
  /** True while an evaluation task reads the tenant's slots; `whenShardIdle` resolves when it ends. */
  shardBusy?(tenant: Tenant): boolean;
  whenShardIdle?(tenant: Tenant): Promise<void>;
  /** A PATCH replaced `oldSlot` by the rule's new slot: free the old one (keep the rule's checkpoint), evaluate soon. */
  replaced?(tenant: Tenant, oldSlot: number, rule: LiveRule): void;
}

export function toRecord(input: RuleInput, now: Date): RuleRecord {
  return {
    rule_id: input.rule_id,
    attributes: padAttributes(input.attributes),
    primary_id: input.primary_id,
    primary_name: input.primary_name ?? input.primary_id,
    secondary_id: input.secondary_id,
    secondary_name: input.secondary_name ?? input.secondary_id,
    primary_weight: input.primary_weight ?? DEFAULT_PRIMARY_WEIGHT,
    created_at: now.toISOString(),
  };
}

/** The output shape of spec 2.4 (listing and creation), plus attributes and created_at. */
export function ruleOutput(r: RuleRecord) {
  return {
    rule_id: r.rule_id,
    attributes: r.attributes,
    primary: { processor_id: r.primary_id, name: r.primary_name },
    secondary: { processor_id: r.secondary_id, name: r.secondary_name },
    primary_weight: r.primary_weight,
    secondary_weight: Math.round((1 - r.primary_weight) * 1e12) / 1e12,
    created_at: r.created_at,
    ...(r.updated_at !== undefined ? { updated_at: r.updated_at } : {}),
  };
}

/** The input-shaped echo used by onboarding (spec 2.4, last paragraph). */
export function ruleEcho(r: RuleRecord) {
  return {
    rule_id: r.rule_id,
    attributes: r.attributes.slice(0, 3),
    primary_id: r.primary_id,
    primary_name: r.primary_name,
    secondary_id: r.secondary_id,
    secondary_name: r.secondary_name,
    primary_weight: r.primary_weight,
  };
}

function isRuleRecord(v: unknown): v is RuleRecord {
  const r = v as RuleRecord;
  return (
    typeof r === 'object' &&
    r !== null &&
    typeof r.rule_id === 'string' &&
    Array.isArray(r.attributes) &&
    r.attributes.every((a) => typeof a === 'string') &&
    typeof r.primary_id === 'string' &&
    typeof r.secondary_id === 'string' &&
    typeof r.primary_weight === 'number'
  );
}

export class RuleService {
  readonly records: Collection<RuleRecord>;
  private readonly ruleLocks = new Map<string, Promise<void>>();
  /** Rules changed by another replica whose attributes a live rule still holds: synced again after the next change. */
  private readonly waiting = new Map<string, Set<string>>();
  /** Operator overrides, applied to each rule as it goes live (set once at start). */
  overrides: OverrideService | null = null;

  constructor(
    private readonly store: Store,
    private readonly tables: SharedTables,
    private readonly tenants: TenantRegistry,
    private readonly lifecycle: RuleLifecycle,
    private readonly maxRulesPerTenant: number,
  ) {
    // The attributes are unique per tenant: two rules with equal attributes would make routing ambiguous.
    // (A stored record that is not a valid rule has no key: load() skips it anyway.)
    this.records = store.collection<RuleRecord>('rules', { uniqueBy: (r) => (isRuleRecord(r) ? attributeKey(r.attributes) : null), storedForm: storedRule });
    store.onRemoteChange<RuleRecord>('rules', (tenantId, ruleId) => this.remoteChanged(tenantId, ruleId));
  }

  /** Start-up: every stored rule goes live. */
  load(): number {
    let n = 0;
    for (const { tenantId, id, value } of this.records.listAll()) {
      if (!isRuleRecord(value)) {
        // Decoded, but not a rule this version can route with: skipped, left in the store.
        log.error('stored rule skipped: not a valid rule record', { tenant: tenantId, rule_id: id });
        continue;
      }
      const tenant = this.tenants.get(tenantId);
      if (tenant.trie.get(value.attributes)) {
        // Stored before equal attributes were refused: the first (by id) keeps routing.
        log.warn('rule not loaded: another rule has the same attributes', { tenant: tenantId, rule_id: value.rule_id });
        continue;
      }
      this.goLive(tenant, value);
      n++;
    }
    return n;
  }

  /**
   * The record a live rule keeps: the compact copy (compact-record.ts), unless the store keeps
   * its own object, which is then shared (and compared by identity in syncRule).
   */
  private liveRecord(record: RuleRecord): RuleRecord {
    return this.records.retainsValues === true ? record : compactRecord(record);
  }

  private goLive(tenant: Tenant, stored: RuleRecord): void {
    const record = this.liveRecord(stored);
    const slot = this.tables.allocRule(record.primary_weight, record.primary_id === record.secondary_id);
    const rule: LiveRule = { record, slot, runStartedAt: null, override: null, cache: null };
    this.overrides?.applyTo(tenant, rule);
    tenant.addRule(rule);
    this.lifecycle.created?.(tenant, record.rule_id, slot);
  }

  /**
   * Writes to one rule (PATCH, DELETE) run one at a time, in arrival order: a PATCH that
   * resolved after a DELETE of the same rule would otherwise bring it back to life.
   */
  private exclusive<T>(tenant: Tenant, ruleId: string, fn: () => Promise<T>): Promise<T> {
    const key = `${tenant.id}\u0000${ruleId}`;
    const prev = this.ruleLocks.get(key) ?? Promise.resolve();
    const run = prev.then(fn, fn);
    const tail = run.then(
      () => undefined,
      () => undefined,
    );
    this.ruleLocks.set(key, tail);
    void tail.then(() => {
      if (this.ruleLocks.get(key) === tail) this.ruleLocks.delete(key);
    });
    return run;
  }

  private checkCapacity(tenant: Tenant, extra: number): void {
    if (tenant.rules.size + tenant.pending.size + extra > this.maxRulesPerTenant) {
      throw errors.limit('rule_id', `a tenant may hold at most ${this.maxRulesPerTenant} rules`);
    }
  }

  /** Two rules with the same (padded, normalized) attributes would make routing ambiguous. */
  private holderOf(tenant: Tenant, attrs: string[]): string | undefined {
    return tenant.trie.get(attrs)?.record.rule_id ?? tenant.pendingAttributes.get(attrs.join('\u0000'));
  }

  async create(tenant: Tenant, input: RuleInput): Promise<RuleRecord> {
    this.checkCapacity(tenant, 1);
    if (tenant.rules.has(input.rule_id) || tenant.pending.has(input.rule_id)) throw errors.ruleExists(input.rule_id);
    const issues = attributeIssues(input.attributes);
    if (issues.length > 0) throw errors.validation(issues);
    const record = toRecord(input, new Date());
    const holder = this.holderOf(tenant, record.attributes);
    if (holder !== undefined) throw errors.sameAttributes(record.rule_id, holder);
    const attrKey = record.attributes.join('\u0000');
    tenant.pending.add(record.rule_id);
    tenant.pendingAttributes.set(attrKey, record.rule_id);
    try {
      await this.records.insert(tenant.id, record.rule_id, record);
    } catch (e) {
      throw conflictError(e, record.rule_id);
    } finally {
      tenant.pending.delete(record.rule_id);
      tenant.pendingAttributes.delete(attrKey);
    }
    // A reload after an outage may have brought it live already.
    if (!tenant.rules.has(record.rule_id)) this.goLive(tenant, record);
    return record;
  }

  /**
   * All-or-nothing creation of several rules (onboarding). Conflicts with existing ids are
   * reported together, before anything is written.
   */
  async createMany(tenant: Tenant, records: RuleRecord[]): Promise<void> {
    const conflicts = records
      .filter((r) => tenant.rules.has(r.rule_id) || tenant.pending.has(r.rule_id) || this.holderOf(tenant, r.attributes) !== undefined)
      .map((r) => r.rule_id);
    if (conflicts.length > 0) throw errors.rulesExist(conflicts);
    this.checkCapacity(tenant, records.length);
    for (const r of records) {
      tenant.pending.add(r.rule_id);
      tenant.pendingAttributes.set(r.attributes.join('\u0000'), r.rule_id);
    }
    try {
      await this.store.atomic((batch) => {
        for (const r of records) batch.insert(this.records, tenant.id, r.rule_id, r);
      });
    } catch (e) {
      // Another replica created one of them meanwhile.
      if (e instanceof StoreConflict) throw errors.rulesExist([e.on === 'id' ? e.id : (e.holder ?? e.id)]);
      throw e;
    } finally {
      for (const r of records) {
        tenant.pending.delete(r.rule_id);
        tenant.pendingAttributes.delete(r.attributes.join('\u0000'));
      }
    }
    for (const r of records) if (!tenant.rules.has(r.rule_id)) this.goLive(tenant, r);
  }

  /**
   * One page of the tenant's live rules in id order, after `after`: the order comes from the
   * store's keys (no sort of every rule per request), the records from the live view (a rule
   * stored but not live — same attributes as another — is not listed, as before).
   */
  page(tenant: Tenant, limit: number, after?: string): LiveRule[] {
    const out: LiveRule[] = [];
    let cursor = after;
    while (out.length < limit) {
      const want = limit - out.length;
      const ids = this.records.ids(tenant.id, want, cursor);
      for (const id of ids) {
        const live = tenant.rules.get(id);
        if (live) out.push(live);
      }
      if (ids.length < want) break; // no more keys
      cursor = ids[ids.length - 1];
    }
    return out;
  }

  list(tenant: Tenant): RuleRecord[] {
    return [...tenant.rules.values()].map((r) => r.record).sort((a, b) => (a.rule_id < b.rule_id ? -1 : a.rule_id > b.rule_id ? 1 : 0));
  }

  get(tenant: Tenant, ruleId: string): RuleRecord {
    const live = tenant.rules.get(ruleId);
    if (!live) throw errors.ruleNotFound(ruleId);
    return live.record;
  }

  /**
   * Changes a rule in place. The new version is stored first, then replaces the old one in
   * the trie within one synchronous step (routing never sees the rule missing), in a fresh
   * slot that carries over the engine state of the processors that stay. Returns both versions.
   */
  patch(tenant: Tenant, ruleId: string, patch: RulePatch): Promise<{ before: RuleRecord; after: RuleRecord }> {
    return this.exclusive(tenant, ruleId, async () => {
      const live = tenant.rules.get(ruleId);
      if (!live || tenant.deleting.has(ruleId)) throw errors.ruleNotFound(ruleId);
      const before = live.record;
      if (patch.attributes !== undefined) {
        const issues = attributeIssues(patch.attributes);
        if (issues.length > 0) throw errors.validation(issues);
      }
      const after = patchedRecord(before, patch, new Date());
      const attrKey = after.attributes.join('\u0000');
      const attrsChanged = attrKey !== before.attributes.join('\u0000');
      if (attrsChanged) {
        const holder = this.holderOf(tenant, after.attributes);
        if (holder !== undefined) throw errors.sameAttributes(ruleId, holder);
        tenant.pendingAttributes.set(attrKey, ruleId);
      }
      try {
        try {
          await this.records.put(tenant.id, ruleId, after);
        } catch (e) {
          throw conflictError(e, ruleId);
        }
        // Checked synchronously right before the swap: a task dispatched meanwhile is waited for too.
        while (this.lifecycle.shardBusy?.(tenant)) await this.lifecycle.whenShardIdle!(tenant);
      } finally {
        if (attrsChanged) tenant.pendingAttributes.delete(attrKey);
      }
      // From here to the swap nothing awaits: no task starts, no request is served in between.
      const current = tenant.rules.get(ruleId);
      if (current) this.swap(tenant, current, after);
      await this.overrides?.ruleChanged(tenant, ruleId);
      return { before, after };
    });
  }

  remove(tenant: Tenant, ruleId: string): Promise<RuleRecord> {
    return this.exclusive(tenant, ruleId, () => this.removeNow(tenant, ruleId));
  }

  private async removeNow(tenant: Tenant, ruleId: string): Promise<RuleRecord> {
    const live = tenant.rules.get(ruleId);
    // A delete already under way owns the rule: a second one is told it is gone.
    if (!live || tenant.deleting.has(ruleId)) throw errors.ruleNotFound(ruleId);
    tenant.deleting.add(ruleId);
    try {
      await this.records.remove(tenant.id, ruleId);
    } finally {
      tenant.deleting.delete(ruleId);
    }
    // The store write is done; only now does routing stop seeing the rule.
    const current = tenant.rules.get(ruleId);
    if (current) {
      tenant.removeRule(ruleId);
      this.lifecycle.release(tenant, current.slot);
    }
    await this.overrides?.ruleChanged(tenant, ruleId);
    return live.record;
  }

  /**
   * Replaces a live rule by a new version of it within one synchronous step (routing never
   * sees the rule missing), in a fresh slot that carries over the engine state of the
   * processors that stay. Call only while no evaluation task reads the tenant's slots.
   */
  private swap(tenant: Tenant, live: LiveRule, stored: RuleRecord): void {
    const after = this.liveRecord(stored);
    const slot = this.tables.allocRule(after.primary_weight, after.primary_id === after.secondary_id);
    const next: LiveRule = { record: after, slot, runStartedAt: null, override: null, cache: null };
    carryEngineState(this.tables, live, next);
    this.overrides?.applyTo(tenant, next);
    tenant.removeRule(after.rule_id);
    tenant.addRule(next);
    this.lifecycle.created?.(tenant, after.rule_id, slot);
    this.lifecycle.replaced?.(tenant, live.slot, next);
  }

  // ── changes made by other replicas ──────────────────────────────────────────────────
  private remoteChanged(tenantId: string, ruleId: string): void {
    const tenant = this.tenants.get(tenantId);
    void this.exclusive(tenant, ruleId, () => this.syncRule(tenant, ruleId)).catch((e) =>
      log.error('rule change from another replica not applied', { tenant: tenantId, rule_id: ruleId, err: String((e as Error)?.stack ?? e) }),
    );
  }

  /**
   * Brings one rule's live view to what the store holds now (not to what one change said:
   * changes applied late or twice still end at the store's state). Runs under the rule's
   * lock, so it never interleaves with a local PATCH or DELETE of the rule.
   */
  private async syncRule(tenant: Tenant, ruleId: string): Promise<void> {
    this.waiting.get(tenant.id)?.delete(ruleId);
    const stored = this.records.get(tenant.id, ruleId);
    const live = tenant.rules.get(ruleId);
    if (stored === undefined || !isRuleRecord(stored)) {
      if (live) {
        tenant.removeRule(ruleId);
        this.lifecycle.release(tenant, live.slot);
        this.overrides?.ruleChangedElsewhere(tenant, ruleId);
      }
      this.retryWaiting(tenant);
      return;
    }
    if (live?.record === stored) return;
    const holder = tenant.trie.get(stored.attributes);
    if (holder !== undefined && holder.record.rule_id !== ruleId) {
      // The holder's own change (moving away, or its removal) has not arrived yet.
      let w = this.waiting.get(tenant.id);
      if (!w) this.waiting.set(tenant.id, (w = new Set()));
      w.add(ruleId);
      return;
    }
    if (!live) {
      this.checkCapacitySoft(tenant);
      this.goLive(tenant, stored);
    } else {
      while (this.lifecycle.shardBusy?.(tenant)) await this.lifecycle.whenShardIdle!(tenant);
      const current = tenant.rules.get(ruleId);
      const latest = this.records.get(tenant.id, ruleId);
      if (!current || !latest || current.record === latest || !isRuleRecord(latest)) return;
      const h = tenant.trie.get(latest.attributes);
      if (h !== undefined && h.record.rule_id !== ruleId) return this.syncRule(tenant, ruleId);
      this.swap(tenant, current, latest);
      this.overrides?.ruleChangedElsewhere(tenant, ruleId);
    }
    this.retryWaiting(tenant);
  }

  private retryWaiting(tenant: Tenant): void {
    const w = this.waiting.get(tenant.id);
    if (!w || w.size === 0) return;
    for (const id of [...w]) this.remoteChanged(tenant.id, id);
  }

  /** Rules from other replicas are taken even past the limit (the store has them): logged. */
  private checkCapacitySoft(tenant: Tenant): void {
    if (tenant.rules.size >= this.maxRulesPerTenant) log.warn('tenant above its rule limit after a change from another replica', { tenant: tenant.id });
  }
}

/** The attributes as one unique key (padded attributes joined by NUL). */
export function attributeKey(attributes: string[]): string {
  return attributes.join('\u0000');
}

/** A write the store refused as a conflict becomes 409; anything else passes through. */
function conflictError(e: unknown, ruleId: string): unknown {
  if (!(e instanceof StoreConflict)) return e;
  if (e.on === 'id') return errors.ruleExists(ruleId);
  return errors.sameAttributes(ruleId, e.holder);
}

/** The stored record after a PATCH: a changed processor id without a name takes the id as its name. */
export function patchedRecord(before: RuleRecord, p: RulePatch, now: Date): RuleRecord {
  const primaryId = p.primary_id ?? before.primary_id;
  const secondaryId = p.secondary_id ?? before.secondary_id;
  return {
    rule_id: before.rule_id,
    attributes: p.attributes !== undefined ? padAttributes(p.attributes) : before.attributes,
    primary_id: primaryId,
    primary_name: p.primary_name ?? (primaryId === before.primary_id ? before.primary_name : primaryId),
    secondary_id: secondaryId,
    secondary_name: p.secondary_name ?? (secondaryId === before.secondary_id ? before.secondary_name : secondaryId),
    primary_weight: p.primary_weight ?? before.primary_weight,
    created_at: before.created_at,
    updated_at: now.toISOString(),
  };
}
