/**
 * Rules changed on another replica, as the rule service sees them through the store's
 * onRemoteChange: a created rule goes live, a changed one is swapped (never missing), a
 * removed one goes, and a rule whose attributes are still held by a rule whose own change has
 * not arrived yet waits for it instead of failing. The "other replica" is simulated: the
 * store's value is changed, then the handlers are told, as the PostgreSQL store does.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { padAttributes } from '../../src/routing/attributes.js';
import { RuleService } from '../../src/rules/rule-service.js';
import { SharedTables } from '../../src/shm/tables.js';
import { LmdbStore } from '../../src/store/lmdb-store.js';
import type { RemoteChangeHandler, Store } from '../../src/store/store.js';
import { TenantRegistry } from '../../src/tenants/registry.js';
import type { RuleRecord } from '../../src/tenants/tenant.js';

/** An LMDB store whose "remote" changes the test makes: written underneath, then announced. */
class SimulatedClusterStore extends LmdbStore {
  private readonly remoteHandlers = new Map<string, RemoteChangeHandler<unknown>[]>();
  override onRemoteChange<V>(collection: string, handler: RemoteChangeHandler<V>): void {
    const list = this.remoteHandlers.get(collection) ?? [];
    list.push(handler as RemoteChangeHandler<unknown>);
    this.remoteHandlers.set(collection, list);
  }
  /** Another replica wrote (or, with undefined, removed) the entry. */
  async remote<V>(collection: string, tenantId: string, id: string, value: V | undefined): Promise<void> {
    const c = (this as Store).collection<V>(collection);
    if (value === undefined) await c.remove(tenantId, id);
    else await c.put(tenantId, id, value);
    for (const h of this.remoteHandlers.get(collection) ?? []) h(tenantId, id, value);
  }
}

const rec = (rule_id: string, attrs: string[], primary_id = 'stripe'): RuleRecord => ({
  rule_id,
  attributes: padAttributes(attrs),
  primary_id,
  primary_name: primary_id,
  secondary_id: 'adyen',
  secondary_name: 'adyen',
  primary_weight: 0.9,
  created_at: '2026-11-24T00:00:00.000Z',
});

describe('rules changed on another replica', () => {
  let dir: string;
  let store: SimulatedClusterStore;
  let rules: RuleService;
  let tenants: TenantRegistry;
  let released: number[] = [];
  beforeEach(() => {
    released = [];
    dir = mkdtempSync(join(tmpdir(), 'rule-remote-'));
    store = new SimulatedClusterStore(dir);
    tenants = new TenantRegistry(['acme'], { predictionEnabled: false, banditEnabled: false, shadowMode: false });
    rules = new RuleService(store, new SharedTables(), tenants, { release: (_t, slot) => void released.push(slot), replaced: (_t, oldSlot) => void released.push(oldSlot) }, 1000);
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const routed = (country: string) => tenants.get('acme').trie.match([country, 'EUR', null, null, null, null])?.rule.record;

  it('a created rule goes live, a changed one is swapped in place, a removed one goes', async () => {
    await store.remote('rules', 'acme', 'x', rec('x', ['GB', 'EUR']));
    await vi.waitFor(() => expect(routed('GB')?.rule_id).toBe('x'));
    const slot = tenants.get('acme').rules.get('x')!.slot;
    await store.remote('rules', 'acme', 'x', rec('x', ['GB', 'EUR'], 'checkout'));
    await vi.waitFor(() => expect(routed('GB')?.primary_id).toBe('checkout'));
    await vi.waitFor(() => expect(released).toContain(slot));
    const newSlot = tenants.get('acme').rules.get('x')!.slot;
    await store.remote('rules', 'acme', 'x', undefined);
    await vi.waitFor(() => expect(routed('GB')).toBeUndefined());
    expect(released).toEqual([slot, newSlot]);
    expect(tenants.get('acme').rules.size).toBe(0);
  });

  it("a rule taking attributes another rule still holds waits for that rule's own change", async () => {
    await store.remote('rules', 'acme', 'x', rec('x', ['GB', 'EUR']));
    await vi.waitFor(() => expect(routed('GB')?.rule_id).toBe('x'));
    // Out of order: y (now holding GB) arrives before x's move to IE.
    const xMoved = rec('x', ['IE', 'EUR']);
    await (store as Store).collection<RuleRecord>('rules').put('acme', 'x', xMoved); // x moved, not announced yet
    await store.remote('rules', 'acme', 'y', rec('y', ['GB', 'EUR']));
    await new Promise((r) => setTimeout(r, 50));
    expect(routed('GB')?.rule_id).toBe('x'); // y waits: the trie still has x on GB
    await store.remote('rules', 'acme', 'x', xMoved); // x's change arrives
    await vi.waitFor(() => {
      expect(routed('GB')?.rule_id).toBe('y');
      expect(routed('IE')?.rule_id).toBe('x');
    });
  });
});
