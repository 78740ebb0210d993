/**
 * A tenant's slot list (what each evaluation cycle hands the pool): every rule's slot once, in
 * the rules' order, the same array while the rules stay as they are, a new one when a rule is
 * added or removed. Built by a plain loop (tenant.ts says why).
 */
import { describe, expect, it } from 'vitest';
import { toRecord } from '../../src/rules/rule-service.js';
import { Tenant, settingsForTier } from '../../src/tenants/tenant.js';

const rule = (i: number, slot: number) => ({
  record: toRecord({ rule_id: `r${i}`, attributes: [`C${i}`, 'USD', 'card'], primary_id: 'a', secondary_id: 'b' }, new Date()),
  slot,
  runStartedAt: [0, 0] as [number, number],
  override: null,
  cache: null,
});

describe('Tenant.slots', () => {
  it('lists every rule slot once, in the rules’ order, and is rebuilt only when the rules change', () => {
    const t = new Tenant('acme', settingsForTier(1, false));
    expect(t.slots()).toEqual(new Int32Array(0));
    for (let i = 0; i < 5; i++) t.addRule(rule(i, 100 + i * 7));
    const first = t.slots();
    expect([...first]).toEqual([100, 107, 114, 121, 128]);
    expect(t.slots()).toBe(first); // cached

    t.removeRule('r2');
    const afterRemove = t.slots();
    expect(afterRemove).not.toBe(first);
    expect([...afterRemove]).toEqual([100, 107, 121, 128]);
    expect([...first]).toEqual([100, 107, 114, 121, 128]); // a list already handed out is not changed

    t.addRule(rule(9, 3));
    expect([...t.slots()]).toEqual([100, 107, 121, 128, 3]);
  });

  it('builds 20,000 rules’ slots', () => {
    const t = new Tenant('big', settingsForTier(1, false));
    for (let i = 0; i < 20_000; i++) t.addRule(rule(i, i * 2));
    const s = t.slots();
    expect(s.length).toBe(20_000);
    expect(s[0]).toBe(0);
    expect(s[19_999]).toBe(39_998);
  });
});
