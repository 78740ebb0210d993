/**
 * The label catalogue's columns (src/metrics/label-catalogue.ts): each tenant's processor ids
 * once, rules pointing at them by index, so the copy posted to the render thread does not hold
 * two strings per rule; and every rule's processors are still the record's.
 */
import { describe, expect, it } from 'vitest';
import { LabelCatalogue } from '../../src/metrics/label-catalogue.js';
import { variedState } from '../helpers/metrics-state.js';

describe('LabelCatalogue', () => {
  it("holds each tenant's processor ids once, and every rule's primary and secondary by index", () => {
    const s = variedState(11, 300);
    const entries = new LabelCatalogue(s.tables, s.tenants).entries();
    expect(entries.length).toBe(3);
    for (const e of entries) {
      const c = e.rules;
      const tenant = s.tenants.get(c.tenantId);
      expect(c.ruleIds.length).toBe(tenant.rules.size);
      expect(new Set(c.processorIds).size).toBe(c.processorIds.length);
      expect(c.processorIds.length).toBeLessThanOrEqual(12); // p0-p6 and s0-s4 (metrics-state.ts)
      c.ruleIds.forEach((id, i) => {
        const r = tenant.rules.get(id)!.record;
        expect(c.processorIds[c.primary[i]]).toBe(r.primary_id);
        expect(c.processorIds[c.secondary[i]]).toBe(r.secondary_id);
      });
    }
  });
});
