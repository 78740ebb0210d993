/** Override precedence (pure) and expiry on an injected clock. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { effectiveOverride, type OverrideRecord } from '../../src/overrides/effective.js';
import { OverrideService } from '../../src/overrides/override-service.js';
import { LmdbStore } from '../../src/store/lmdb-store.js';
import { TenantRegistry } from '../../src/tenants/registry.js';
import type { LiveRule, RuleRecord } from '../../src/tenants/tenant.js';

const rule = (primary = 'p', secondary = 's'): RuleRecord => ({
  rule_id: 'r',
  attributes: ['*', '*', '*', '*', '*', '*'],
  primary_id: primary,
  primary_name: primary,
  secondary_id: secondary,
  secondary_name: secondary,
  primary_weight: 0.9,
  created_at: '2026-01-01T00:00:00.000Z',
});
const ov = (mode: 'pin' | 'drain', processor_id: string, scope: 'rule' | 'processor' = 'rule'): OverrideRecord => ({
  scope,
  mode,
  processor_id,
  reason: null,
  created_at: '',
  expires_at: '',
});

describe('effectiveOverride', () => {
  it('pin and drain of a rule set the primary share to 1 or 0', () => {
    expect(effectiveOverride(rule(), ov('pin', 'p'), new Map())?.primaryShare).toBe(1);
    expect(effectiveOverride(rule(), ov('pin', 's'), new Map())?.primaryShare).toBe(0);
    expect(effectiveOverride(rule(), ov('drain', 'p'), new Map())?.primaryShare).toBe(0);
    expect(effectiveOverride(rule(), ov('drain', 's'), new Map())?.primaryShare).toBe(1);
    expect(effectiveOverride(rule(), undefined, new Map())).toBeNull();
  });
  it('a rule override wins over a processor drain; a drain of both, or of a single-processor rule, does nothing', () => {
    const drains = new Map([['p', ov('drain', 'p', 'processor')]]);
    expect(effectiveOverride(rule(), undefined, drains)?.primaryShare).toBe(0);
    expect(effectiveOverride(rule(), ov('pin', 'p'), drains)?.primaryShare).toBe(1);
    drains.set('s', ov('drain', 's', 'processor'));
    expect(effectiveOverride(rule(), undefined, drains)).toBeNull();
    expect(effectiveOverride(rule('p', 'p'), undefined, new Map([['p', ov('drain', 'p', 'processor')]]))).toBeNull();
    expect(effectiveOverride(rule(), ov('pin', 'gone'), new Map())).toBeNull();
  });
});

describe('OverrideService expiry', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ovr-'));
  const store = new LmdbStore(dir);
  afterAll(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  it('an override ends exactly at its expiry on the injected clock, and is not restored afterwards', async () => {
    let now = Date.parse('2026-05-01T00:00:00Z');
    const tenants = new TenantRegistry(['t'], { predictionEnabled: false, banditEnabled: false, shadowMode: false });
    const t = tenants.get('t');
    const live: LiveRule = { record: rule(), slot: 0, runStartedAt: [0, 0], override: null, cache: null };
    t.rules.set('r', live);
    const svc = new OverrideService(store, tenants, () => now);
    const expired: OverrideRecord[] = [];
    svc.onExpired = (_t, r) => expired.push(r);
    await svc.setRuleOverride(t, live, 'pin', 's', { expires_in_s: 30 });
    expect(live.override?.primaryShare).toBe(0);
    now += 29_999;
    expect(svc.expireDue()).toBe(0);
    expect(live.override).not.toBeNull();
    now += 1;
    expect(svc.expireDue()).toBe(1);
    expect(live.override).toBeNull();
    // Told once the stored record is removed (the replica whose removal took it tells).
    await vi.waitFor(() => expect(expired.map((r) => r.processor_id)).toEqual(['s']));
    svc.stop();
    // Written again, then the clock passes its expiry while "stopped": a new service drops it at load.
    await svc.setRuleOverride(t, live, 'pin', 's', { expires_in_s: 10 });
    svc.stop();
    now += 10_000;
    const tenants2 = new TenantRegistry(['t'], { predictionEnabled: false, banditEnabled: false, shadowMode: false });
    const live2: LiveRule = { record: rule(), slot: 0, runStartedAt: [0, 0], override: null, cache: null };
    tenants2.get('t').rules.set('r', live2);
    const svc2 = new OverrideService(store, tenants2, () => now);
    svc2.load();
    expect(live2.override).toBeNull();
    svc2.stop();
  });
});
