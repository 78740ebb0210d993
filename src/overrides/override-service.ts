/**
 * Operator overrides: a rule pinned to or drained from one of its processors, and tenant-wide
 * processor drains. The store is the record (they survive restarts); the tenant's maps and
 * each live rule's `override` field are the live view the route path reads. Every override
 * expires by itself: one timer for the earliest expiry; an override already expired at start
 * is dropped.
 */
import { errors } from '../errors.js';
import { log } from '../log.js';
import type { Collection, Store } from '../store/store.js';
import type { TenantRegistry } from '../tenants/registry.js';
import type { LiveRule, Tenant } from '../tenants/tenant.js';
import type { DrainInput } from '../schemas/overrides.js';
import { effectiveOverride, type OverrideMode, type OverrideRecord } from './effective.js';
import { applyOverride } from '../routing/decide.js';

export const DEFAULT_OVERRIDE_TTL_S = 3600;
const MAX_TIMER_MS = 2 ** 31 - 1;

/** How long an override lasts and why: the fields every override request carries. */
export type OverrideInput = DrainInput;

const ruleKey = (ruleId: string) => `rule:${ruleId}`;
const processorKey = (processorId: string) => `processor:${processorId}`;

export class OverrideService {
  private readonly records: Collection<OverrideRecord>;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private nextExpiryMs = Infinity;
  /** Told about every override that ran out (the change audit records it). */
  onExpired: (tenant: Tenant, record: OverrideRecord) => void = () => {};

  constructor(
    store: Store,
    private readonly tenants: TenantRegistry,
    private readonly now: () => number = Date.now,
  ) {
    this.records = store.collection<OverrideRecord>('overrides');
    store.onRemoteChange<OverrideRecord>('overrides', (tenantId, key, rec) => this.remoteChanged(tenantId, key, rec));
  }

  /** Start-up, after the rules are live: restores the overrides still in force. */
  load(): void {
    const nowMs = this.now();
    for (const { tenantId, id, value } of this.records.listAll()) {
      if (Date.parse(value.expires_at) <= nowMs) {
        void this.records.remove(tenantId, id).catch((e) => log.error('expired override not removed', { err: String(e) }));
        continue;
      }
      const t = this.tenants.get(tenantId);
      if (value.scope === 'rule' && value.rule_id !== undefined) t.ruleOverrides.set(value.rule_id, value);
      else t.processorDrains.set(value.processor_id, value);
    }
    for (const t of this.tenants.all()) this.refresh(t);
    this.schedule();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Sets the override of one live rule from the tenant's maps (rule created, changed, loaded). */
  applyTo(tenant: Tenant, rule: LiveRule): void {
    applyOverride(rule, effectiveOverride(rule.record, tenant.ruleOverrides.get(rule.record.rule_id), tenant.processorDrains));
  }

  list(tenant: Tenant): OverrideRecord[] {
    return [...tenant.ruleOverrides.values(), ...tenant.processorDrains.values()];
  }

  async setRuleOverride(tenant: Tenant, rule: LiveRule, mode: OverrideMode, processorId: string, input: OverrideInput) {
    const rec = rule.record;
    if (processorId !== rec.primary_id && processorId !== rec.secondary_id) {
      throw errors.field('processor_id', `processor "${processorId}" is not part of rule "${rec.rule_id}"`);
    }
    if (mode === 'drain' && rec.primary_id === rec.secondary_id) {
      throw errors.field('mode', `rule "${rec.rule_id}" has a single processor: draining it would leave nowhere to route`);
    }
    const after = this.newRecord('rule', mode, processorId, input, rec.rule_id);
    const before = tenant.ruleOverrides.get(rec.rule_id) ?? null;
    await this.records.put(tenant.id, ruleKey(rec.rule_id), after);
    tenant.ruleOverrides.set(rec.rule_id, after);
    this.applyTo(tenant, rule);
    this.schedule();
    return { before, after };
  }

  async clearRuleOverride(tenant: Tenant, ruleId: string): Promise<OverrideRecord> {
    const before = tenant.ruleOverrides.get(ruleId);
    if (before === undefined) throw errors.overrideNotFound(`rule "${ruleId}" has no override`, 'rule_id');
    await this.records.remove(tenant.id, ruleKey(ruleId));
    tenant.ruleOverrides.delete(ruleId);
    const rule = tenant.rules.get(ruleId);
    if (rule) this.applyTo(tenant, rule);
    return before;
  }

  /** Drains `processorId` from every rule of the tenant that has it; returns the record and those rules. */
  async drainProcessor(tenant: Tenant, processorId: string, input: OverrideInput) {
    const rules = this.rulesWith(tenant, processorId);
    if (rules.length === 0) throw errors.processorNotFound(processorId);
    const after = this.newRecord('processor', 'drain', processorId, input);
    const before = tenant.processorDrains.get(processorId) ?? null;
    await this.records.put(tenant.id, processorKey(processorId), after);
    tenant.processorDrains.set(processorId, after);
    for (const r of rules) this.applyTo(tenant, r);
    this.schedule();
    return { before, after, rules: rules.map((r) => r.record.rule_id).sort() };
  }

  async undrainProcessor(tenant: Tenant, processorId: string): Promise<OverrideRecord> {
    const before = tenant.processorDrains.get(processorId);
    if (before === undefined) throw errors.overrideNotFound(`processor "${processorId}" is not drained`, 'processor_id');
    await this.records.remove(tenant.id, processorKey(processorId));
    tenant.processorDrains.delete(processorId);
    for (const r of this.rulesWith(tenant, processorId)) this.applyTo(tenant, r);
    return before;
  }

  /** A deleted rule takes its override with it; a changed rule loses one on a processor it no longer has. */
  async ruleChanged(tenant: Tenant, ruleId: string): Promise<void> {
    const ov = tenant.ruleOverrides.get(ruleId);
    if (ov === undefined) return;
    const rule = tenant.rules.get(ruleId);
    if (rule && (ov.processor_id === rule.record.primary_id || ov.processor_id === rule.record.secondary_id)) return;
    tenant.ruleOverrides.delete(ruleId);
    if (rule) this.applyTo(tenant, rule);
    await this.records.remove(tenant.id, ruleKey(ruleId));
  }

  /**
   * A rule changed or went on another replica: the same as ruleChanged, in memory only (that
   * replica removes the stored override; its removal arrives as a change of its own).
   */
  ruleChangedElsewhere(tenant: Tenant, ruleId: string): void {
    const ov = tenant.ruleOverrides.get(ruleId);
    if (ov === undefined) return;
    const rule = tenant.rules.get(ruleId);
    if (rule && (ov.processor_id === rule.record.primary_id || ov.processor_id === rule.record.secondary_id)) return;
    tenant.ruleOverrides.delete(ruleId);
    if (rule) this.applyTo(tenant, rule);
  }

  /** An override set, cleared or expired on another replica (key `rule:<id>` or `processor:<id>`). */
  private remoteChanged(tenantId: string, key: string, rec: OverrideRecord | undefined): void {
    const t = this.tenants.get(tenantId);
    if (key.startsWith('rule:')) {
      const ruleId = key.slice('rule:'.length);
      if (rec) t.ruleOverrides.set(ruleId, rec);
      else t.ruleOverrides.delete(ruleId);
      const rule = t.rules.get(ruleId);
      if (rule) this.applyTo(t, rule);
    } else if (key.startsWith('processor:')) {
      const processorId = key.slice('processor:'.length);
      if (rec) t.processorDrains.set(processorId, rec);
      else t.processorDrains.delete(processorId);
      for (const r of this.rulesWith(t, processorId)) this.applyTo(t, r);
    }
    this.schedule();
  }

  /** Removes every override whose time has come; exposed so tests can drive the clock. */
  expireDue(nowMs: number = this.now()): number {
    let n = 0;
    for (const t of this.tenants.all()) {
      for (const [id, rec] of t.ruleOverrides) {
        if (Date.parse(rec.expires_at) > nowMs) continue;
        t.ruleOverrides.delete(id);
        const rule = t.rules.get(id);
        if (rule) this.applyTo(t, rule);
        this.expired(t, ruleKey(id), rec);
        n++;
      }
      for (const [pid, rec] of t.processorDrains) {
        if (Date.parse(rec.expires_at) > nowMs) continue;
        t.processorDrains.delete(pid);
        for (const r of this.rulesWith(t, pid)) this.applyTo(t, r);
        this.expired(t, processorKey(pid), rec);
        n++;
      }
    }
    this.nextExpiryMs = Infinity;
    this.schedule();
    return n;
  }

  /**
   * Every replica expires overrides on its own clock; the one whose removal took the stored
   * record tells onExpired (the change audit), so an expiry is recorded once per cluster.
   */
  private expired(t: Tenant, key: string, rec: OverrideRecord): void {
    log.info('override expired', { tenant: t.id, scope: rec.scope, rule_id: rec.rule_id, processor_id: rec.processor_id, mode: rec.mode });
    this.records.remove(t.id, key).then(
      (removed) => {
        if (removed) this.onExpired(t, rec);
      },
      (e) => log.error('expired override not removed', { err: String(e) }),
    );
  }

  private newRecord(scope: 'rule' | 'processor', mode: OverrideMode, processorId: string, input: OverrideInput, ruleId?: string): OverrideRecord {
    const nowMs = this.now();
    const ttlS = input.expires_in_s ?? DEFAULT_OVERRIDE_TTL_S;
    return {
      scope,
      ...(ruleId !== undefined ? { rule_id: ruleId } : {}),
      mode,
      processor_id: processorId,
      reason: input.reason ?? null,
      created_at: new Date(nowMs).toISOString(),
      expires_at: new Date(nowMs + Math.round(ttlS * 1000)).toISOString(),
    };
  }

  private rulesWith(tenant: Tenant, processorId: string): LiveRule[] {
    const out: LiveRule[] = [];
    for (const r of tenant.rules.values()) if (r.record.primary_id === processorId || r.record.secondary_id === processorId) out.push(r);
    return out;
  }

  private refresh(tenant: Tenant): void {
    for (const r of tenant.rules.values()) this.applyTo(tenant, r);
  }

  /** Arms the timer for the earliest expiry (re-armed when an earlier one is added). */
  private schedule(): void {
    let earliest = Infinity;
    for (const t of this.tenants.all()) {
      for (const r of t.ruleOverrides.values()) earliest = Math.min(earliest, Date.parse(r.expires_at));
      for (const r of t.processorDrains.values()) earliest = Math.min(earliest, Date.parse(r.expires_at));
    }
    if (earliest === this.nextExpiryMs && this.timer !== undefined) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.nextExpiryMs = earliest;
    if (earliest === Infinity) return;
    const waitMs = Math.min(Math.max(0, earliest - this.now()), MAX_TIMER_MS);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.expireDue();
    }, waitMs);
    this.timer.unref();
  }
}
