/**
 * The front thread's snapshot of every tenant's rule list for the per-rule metric families
 * (rule-families.ts): slots and the label strings (rule, processor ids) in the tenant's rule
 * order. A tenant's columns are rebuilt only when its rules changed (`Tenant.rulesVersion`),
 * so a scrape of an unchanged deployment costs one pass over the tenants, not over the rules;
 * the render thread is sent a tenant's columns only when their version is new to it.
 */
import { RI_GENERATION } from '../shm/layout.js';
import { ruleI32Base, ruleSegment } from '../shm/slots.js';
import type { SharedTables } from '../shm/tables.js';
import type { TenantRegistry } from '../tenants/registry.js';
import type { Tenant } from '../tenants/tenant.js';
import type { RenderTenant, RuleColumns } from './rule-families.js';

/** A tenant's columns and the `rulesVersion` they were built at. */
export interface CatalogueEntry extends RenderTenant {
  version: number;
}

export class LabelCatalogue {
  private readonly built = new Map<string, { version: number; rules: RuleColumns }>();

  constructor(
    private readonly tables: SharedTables,
    private readonly tenants: TenantRegistry,
  ) {}

  /** Every tenant, in registry order, with its current rule columns and Tier 2 switch. */
  entries(): CatalogueEntry[] {
    const out: CatalogueEntry[] = [];
    for (const t of this.tenants.all()) {
      let b = this.built.get(t.id);
      if (b === undefined || b.version !== t.rulesVersion) {
        b = { version: t.rulesVersion, rules: this.columns(t) };
        this.built.set(t.id, b);
      }
      out.push({ version: b.version, rules: b.rules, predictionEnabled: t.settings.predictionEnabled });
    }
    return out;
  }

  private columns(t: Tenant): RuleColumns {
    const n = t.rules.size;
    const c: RuleColumns = {
      tenantId: t.id,
      slots: new Int32Array(n),
      generations: new Int32Array(n),
      ruleIds: new Array(n),
      processorIds: [],
      primary: new Int32Array(n),
      secondary: new Int32Array(n),
    };
    const processorIndex = new Map<string, number>();
    const indexOf = (id: string) => {
      let x = processorIndex.get(id);
      if (x === undefined) processorIndex.set(id, (x = c.processorIds.push(id) - 1));
      return x;
    };
    let i = 0;
    for (const rule of t.rules.values()) {
      const r = rule.record;
      c.slots[i] = rule.slot;
      c.generations[i] = ruleSegment(this.tables.ruleSegs, rule.slot).ruleI32[ruleI32Base(rule.slot) + RI_GENERATION];
      c.ruleIds[i] = r.rule_id;
      c.primary[i] = indexOf(r.primary_id);
      c.secondary[i] = indexOf(r.secondary_id);
      i++;
    }
    return c;
  }
}
