/**
 * Live rule records are kept compact (src/rules/compact-record.ts): the same values, short
 * strings shared between rules, nothing keeping the decoded record text alive, and a rule's
 * front-thread heap cost bounded (measured on 20,000 rules loaded from LMDB).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { compactRecord, flatString, internString, internedCount, MAX_INTERNED } from '../../src/rules/compact-record.js';
import { RuleService, toRecord } from '../../src/rules/rule-service.js';
import { SharedTables } from '../../src/shm/tables.js';
import { LmdbStore } from '../../src/store/lmdb-store.js';
import { TenantRegistry } from '../../src/tenants/registry.js';
import { settingsForTier, type RuleRecord } from '../../src/tenants/tenant.js';
import { seedRules } from '../helpers/seed-rules.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const rec = (id: string, extra: Partial<RuleRecord> = {}): RuleRecord => ({
  ...toRecord({ rule_id: id, attributes: ['US', 'USD', 'card'], primary_id: 'stripe_us', secondary_id: 'adyen_us' }, new Date('2026-11-24T05:00:00.000Z')),
  ...extra,
});

describe('compact rule records', () => {
  it('keeps every value, and no updated_at key a record did not have', () => {
    const r = rec('us_usd_card');
    const c = compactRecord(r);
    expect(c).not.toBe(r);
    expect(c).toStrictEqual(r);
    expect(Object.keys(c)).toEqual(Object.keys(r));
    const patched = rec('r2', { updated_at: '2026-11-24T06:00:00.000Z', primary_name: 'Stripe (US) — ✓' });
    expect(compactRecord(patched)).toStrictEqual(patched);
  });

  it('shares one string object per distinct attribute and processor value', () => {
    // Strings built at run time are distinct objects; interning makes them one.
    const a = compactRecord(rec('a', { primary_id: ['stripe', 'us'].join('_') }));
    const b = compactRecord(rec('b', { primary_id: ['stripe', 'us'].join('_') }));
    expect(a.primary_id).toBe(b.primary_id);
    expect(a.attributes).toEqual(b.attributes);
    expect(a.attributes).not.toBe(b.attributes);
    expect(internString('x'.repeat(65))).toBe('x'.repeat(65)); // long: copied, not interned
  });

  it('bounds the intern table', () => {
    for (let i = 0; i < MAX_INTERNED + 10; i++) internString(`v${i}`);
    expect(internedCount()).toBeLessThanOrEqual(MAX_INTERNED);
    expect(internString('v1')).toBe('v1');
  });

  it('copies long strings, keeping lone surrogates as they are', () => {
    const s = '2026-11-24T05:00:00.000Z';
    expect(flatString(s)).toBe(s);
    const lone = 'abcdefghijklmn\ud800';
    expect(flatString(lone)).toBe(lone);
  });

  it('20,000 rules loaded from LMDB cost under 800 bytes each of the front thread heap (~660 now, ~1,020 as decoded)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'compact-'));
    try {
      // Distinct Strings per rule, as a real rule set holds them.
      await seedRules(dir, 't', 20_000);
      const store = new LmdbStore(dir);
      const tables = new SharedTables();
      const tenants = new TenantRegistry(['t'], settingsForTier(1, false));
      gc();
      const before = process.memoryUsage().heapUsed;
      const rules = new RuleService(store, tables, tenants, { release() {} }, 200_000);
      expect(rules.load()).toBe(20_000);
      gc();
      const perRule = (process.memoryUsage().heapUsed - before) / 20_000;
      expect(tenants.get('t').rules.size).toBe(20_000);
      expect(perRule).toBeLessThan(800);
      // The live record is the compact copy: equal values, its own object.
      const live = tenants.get('t').rules.get('rule_7')!.record;
      expect(live).toStrictEqual(rules.records.get('t', 'rule_7'));
      await store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
