/**
 * Rules: the store is the record, the tenant's trie and the shared tables are the live
 * view. A write is acknowledged only after the store committed it; the id is reserved
 * synchronously first, so two concurrent creates of one id cannot both succeed.
 */
import { errors } from '../errors.js';
import { log } from '../log.js';
import { attributeIssues, padAttributes } from '../routing/attributes.js';
import type { RuleInput } from '../schemas/rules.js';
import type { SharedTables } from '../shared/tables.js';
import type { Collection, Store } from '../store/store.js';
import type { RuleRecord, Tenant } from '../tenants/tenant.js';
import type { TenantRegistry } from '../tenants/registry.js';

export const DEFAULT_PRIMARY_WEIGHT = 0.9;

export interface RuleLifecycle {
  /** A rule went live (slot allocated and initialised). */
  created?(tenant: Tenant, ruleId: string, slot: number): void;
  /** Frees a deleted rule's slot once no evaluation is reading it. */
  release(tenant: Tenant, slot: number): void;
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

export class RuleService {
  readonly records: Collection<RuleRecord>;

  constructor(
    private readonly store: Store,
    private readonly tables: SharedTables,
    private readonly tenants: TenantRegistry,
    private readonly lifecycle: RuleLifecycle,
    private readonly maxRulesPerTenant: number,
  ) {
    this.records = store.collection<RuleRecord>('rules');
  }

  /** Start-up: every stored rule goes live. */
  load(): number {
    let n = 0;
    for (const { tenantId, value } of this.records.listAll()) {
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

  private goLive(tenant: Tenant, record: RuleRecord): void {
    const slot = this.tables.allocRule(record.primary_weight, record.primary_id === record.secondary_id);
    tenant.addRule({ record, slot, runStartedAt: [0, 0] });
    this.lifecycle.created?.(tenant, record.rule_id, slot);
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
      await this.records.put(tenant.id, record.rule_id, record);
    } finally {
      tenant.pending.delete(record.rule_id);
      tenant.pendingAttributes.delete(attrKey);
    }
    this.goLive(tenant, record);
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
        for (const r of records) batch.put(this.records, tenant.id, r.rule_id, r);
      });
    } finally {
      for (const r of records) {
        tenant.pending.delete(r.rule_id);
        tenant.pendingAttributes.delete(r.attributes.join('\u0000'));
      }
    }
    for (const r of records) this.goLive(tenant, r);
  }

  list(tenant: Tenant): RuleRecord[] {
    return [...tenant.rules.values()].map((r) => r.record).sort((a, b) => (a.rule_id < b.rule_id ? -1 : a.rule_id > b.rule_id ? 1 : 0));
  }

  async remove(tenant: Tenant, ruleId: string): Promise<void> {
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
    tenant.removeRule(ruleId);
    this.lifecycle.release(tenant, live.slot);
  }
}
