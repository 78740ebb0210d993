/** Failover audit-trail retention (count and age), on a temporary LMDB store. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EventRetention, FAILOVER_EVENTS_KEPT, FAILOVER_EVENTS_MAX_AGE_MS } from '../../src/store/retention.js';
import { LmdbStore } from '../../src/store/lmdb-store.js';

const dirs: string[] = [];
const stores: LmdbStore[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function store(): LmdbStore {
  const d = mkdtempSync(join(tmpdir(), 'retention-'));
  dirs.push(d);
  const s = new LmdbStore(d);
  stores.push(s);
  return s;
}

describe('failover event retention', () => {
  it('defaults: 10,000 events, 90 days', () => {
    expect(FAILOVER_EVENTS_KEPT).toBe(10_000);
    expect(FAILOVER_EVENTS_MAX_AGE_MS).toBe(90 * 24 * 3600 * 1000);
  });

  it('keeps the newest `keep` events of each tenant and drops those past the age limit', async () => {
    const log = store().log<{ n: number }>('failover_events');
    const now = 1_800_000_000_000;
    for (let i = 0; i < 30; i++) await log.append('a', now - 30_000 + i * 1000, { n: i });
    for (let i = 0; i < 5; i++) await log.append('b', now - 10 * 86_400_000 + i, { n: i }); // 10 days old
    const r = new EventRetention(log, { keep: 12, maxAgeMs: 7 * 86_400_000, everyMs: 60_000, now: () => now });
    expect(await r.prune('a')).toBe(18);
    expect(log.count('a')).toBe(12);
    expect(log.newest('a', 100).map((e) => e.value.n)).toEqual(Array.from({ length: 12 }, (_, i) => 29 - i));
    expect(await r.prune('b')).toBe(5);
    expect(log.count('b')).toBe(0);
  });

  it('runs at most once per interval per tenant', async () => {
    const log = store().log<{ n: number }>('failover_events');
    let now = 1_800_000_000_000;
    const r = new EventRetention(log, { keep: 2, everyMs: 60_000, now: () => now });
    for (let i = 0; i < 5; i++) await log.append('a', now + i, { n: i });
    expect(await r.maybePrune('a')).toBe(3);
    await log.append('a', now + 10, { n: 10 });
    expect(r.maybePrune('a')).toBeNull();
    expect(r.maybePrune('other')).not.toBeNull();
    now += 60_000;
    expect(await r.maybePrune('a')).toBe(1);
    expect(log.newest('a', 10).map((e) => e.value.n)).toEqual([10, 4]);
  });
});

describe('retention of a trail written in bursts', () => {
  it('prunes once a tenth of `keep` entries were appended, within the interval', async () => {
    const log = store().log<{ n: number }>('audit');
    const now = 1_800_000_000_000;
    const r = new EventRetention(log, { keep: 20, everyMs: 60_000, now: () => now });
    await log.append('a', now, { n: 0 });
    expect(await r.maybePrune('a', 1)).toBe(0); // the first call prunes: nothing to drop
    let n = 1;
    for (; n < 29; n++) {
      await log.append('a', now + n, { n });
      const pruning = r.maybePrune('a', 1);
      // every second append (a tenth of 20), not once a minute
      expect(pruning === null).toBe(n % 2 === 1);
      if (pruning !== null) await pruning;
    }
    expect(log.count('a')).toBe(20);
    // another tenant's appends do not count for this one
    expect(r.maybePrune('b', 1)).not.toBeNull();
    expect(r.maybePrune('a', 1)).toBeNull();
  });

  it('the change audit prunes as it appends: a burst does not wait for the minute', async () => {
    const s = store();
    const { AuditTrail } = await import('../../src/audit/audit-trail.js');
    const trail = new AuditTrail(s, () => 1_800_000_000_000);
    const ctx = { grant: { tenantId: 't', keyFingerprint: null } } as never;
    for (let i = 0; i < 11_500; i++) {
      await trail.record(ctx, { action: 'rule.created', target_type: 'rule', target_id: `r${i}`, before: null, after: { i } });
    }
    await new Promise((r) => setTimeout(r, 50)); // the last pruning's commit
    // 10,000 kept, plus at most the 1,000 appended since the last pruning
    expect(trail.entries.count('t')).toBeLessThanOrEqual(11_000);
    expect(trail.entries.count('t')).toBeGreaterThanOrEqual(10_000);
  }, 60_000);
});
