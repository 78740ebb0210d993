/**
 * Names that mean the same thing on every replica, for what each replica keeps in its own
 * slots: a processor window is named by (tenant, rule, processor), a rule's table entry by
 * (tenant, rule, primary, secondary). Kept up to date by the engine's rule lifecycle hooks,
 * so the outcome path finds its window key by slot (an array read) and the receivers find
 * the slot by key (a map lookup).
 */
import type { LiveRule } from '../tenants/tenant.js';
import { hash53, windowKey } from './keys.js';

export interface WindowRef {
  tenantId: string;
  rule: LiveRule;
  k: 0 | 1;
}

export function tableRuleKey(tenantId: string, rule: LiveRule): number {
  const r = rule.record;
  return hash53(`${tenantId}\u0000${r.rule_id}\u0000${r.primary_id}\u0000${r.secondary_id}`);
}

export class ClusterIndex {
  /** slot * 2 + k → window key (0 = none). */
  private bySlot = new Float64Array(2048);
  private readonly windows = new Map<number, WindowRef>();
  private readonly rules = new Map<string, Map<number, LiveRule>>();
  private readonly ruleKeys = new WeakMap<LiveRule, number>();

  add(tenantId: string, rule: LiveRule): void {
    const need = (rule.slot + 1) * 2;
    if (need > this.bySlot.length) {
      const next = new Float64Array(Math.max(need, this.bySlot.length * 2));
      next.set(this.bySlot);
      this.bySlot = next;
    }
    const r = rule.record;
    for (const k of [0, 1] as const) {
      const key = windowKey(tenantId, r.rule_id, k === 0 ? r.primary_id : r.secondary_id);
      this.bySlot[rule.slot * 2 + k] = key;
      // A self-fallback rule names one window twice; either side finds it.
      this.windows.set(key, { tenantId, rule, k });
    }
    const rk = tableRuleKey(tenantId, rule);
    this.ruleKeys.set(rule, rk);
    let m = this.rules.get(tenantId);
    if (!m) this.rules.set(tenantId, (m = new Map()));
    m.set(rk, rule);
  }

  remove(tenantId: string, rule: LiveRule): void {
    for (const k of [0, 1] as const) {
      const i = rule.slot * 2 + k;
      const key = this.bySlot[i];
      if (this.windows.get(key)?.rule === rule) this.windows.delete(key);
      if (i < this.bySlot.length) this.bySlot[i] = 0;
    }
    const rk = this.ruleKeys.get(rule);
    const m = this.rules.get(tenantId);
    if (rk !== undefined && m?.get(rk) === rule) m.delete(rk);
  }

  /** The outcome path: the window key of processor k of the rule in `slot` (0 when unknown). */
  windowKeyOf(slot: number, k: 0 | 1): number {
    const i = slot * 2 + k;
    return i < this.bySlot.length ? this.bySlot[i] : 0;
  }

  window(key: number): WindowRef | undefined {
    return this.windows.get(key);
  }

  ruleKeyOf(rule: LiveRule): number | undefined {
    return this.ruleKeys.get(rule);
  }

  rule(tenantId: string, key: number): LiveRule | undefined {
    return this.rules.get(tenantId)?.get(key);
  }
}
