/**
 * Cluster mode end to end: three real replicas on free ports share one PostgreSQL schema
 * (a fresh SERVICE_CLUSTER per run, dropped afterwards). A change on one replica reaches the
 * others within a second (rules, deletes, webhooks, the failover audit trail), conflicting
 * creates are decided by the database, a killed listener connection heals by the poll, and
 * a replica cut off from PostgreSQL (through a TCP proxy this test closes; the shared server
 * is never touched) keeps routing, answers writes with 503 JSON and recovers without restart.
 * Skipped with the reason when PostgreSQL cannot be reached (failed when CI is set).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dropSchema, newSchema, pgQuery, testPostgres } from '../helpers/postgres.js';
import { startServer, stopAllServers, type TestServer } from '../helpers/server.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';

const pg = await testPostgres();
const KEY = { 'X-API-Key': 'k-cluster' };

/** Resolves with the elapsed ms once `fn` is true (checked every 10 ms); fails after `ms`. */
async function within(ms: number, what: string, fn: () => Promise<boolean>): Promise<number> {
  const start = Date.now();
  for (;;) {
    if (await fn()) return Date.now() - start;
    if (Date.now() - start > ms) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const rule = (rule_id: string, attributes: string[]) => ({ rule_id, attributes, primary_id: 'stripe', secondary_id: 'adyen' });

describe.skipIf(!pg.ok)('cluster mode: three replicas on one PostgreSQL schema', () => {
  const schema = newSchema('cluster');
  let replicas: TestServer[] = [];
  const env = (id: string, url = pg.url) => ({
    SERVICE_STORE_URL: url,
    SERVICE_CLUSTER: schema,
    SERVICE_REPLICA_ID: id,
    SERVICE_API_KEYS: 'k-cluster:acme',
    SERVICE_TIER: '1',
    SERVICE_LOG_LEVEL: 'warn',
  });

  beforeAll(async () => {
    // All three at once: the schema is created and migrated once, under the advisory lock.
    replicas = await Promise.all(['r1', 'r2', 'r3'].map((id) => startServer({ env: env(id) })));
  });
  afterAll(async () => {
    await stopAllServers();
    await dropSchema(schema);
  });

  const routes = async (s: TestServer, tx: Record<string, string>) => (await s.request('POST', '/v1/route', tx, KEY)).status;

  it('each replica names itself and the cluster in GET / and in the metrics', async () => {
    const [a] = replicas;
    expect((await a.request('GET', '/')).json).toMatchObject({ replica_id: 'r1', store: 'postgres', cluster: schema });
    const metrics = (await a.request('GET', '/metrics/')).text;
    expect(metrics).toContain(`service_replica_info{replica_id="r1",store="postgres",cluster="${schema}"} 1`);
    expect(metrics).toMatch(/service_store_connected 1/);
    expect(metrics).toMatch(/service_store_listening 1/);
    expect(metrics).toMatch(/service_store_remote_changes_total \d+/);
    const migrations = await pgQuery<{ version: number }>(`SELECT version FROM "${schema}".schema_migrations`);
    expect(migrations.map((m) => m.version)).toEqual([1]);
  });

  it('a rule created on one replica routes on the other two within 1 s; a delete likewise', async () => {
    const [a, b, c] = replicas;
    const tx = { country: 'NL', currency: 'EUR' };
    expect(await routes(b, tx)).toBe(404);
    expect((await a.request('POST', '/v1/rules', rule('c_nl', ['NL', 'EUR']), KEY)).status).toBe(201);
    const [tb, tc] = await Promise.all([b, c].map((s) => within(1000, 'route on another replica', async () => (await routes(s, tx)) === 200)));
    expect(Math.max(tb, tc)).toBeLessThan(1000);
    expect((await c.request('GET', '/v1/rules/c_nl', undefined, KEY)).json).toMatchObject({ rule_id: 'c_nl' });
    expect((await b.request('DELETE', '/v1/rules/c_nl', undefined, KEY)).status).toBe(200);
    await Promise.all([a, c].map((s) => within(1000, 'delete on another replica', async () => (await routes(s, tx)) === 404)));
    expect((await a.request('GET', '/v1/rules/c_nl', undefined, KEY)).status).toBe(404);
  });

  it('a PATCH on one replica is what the others route with (no moment without the rule)', async () => {
    const [a, b] = replicas;
    expect((await a.request('POST', '/v1/rules', rule('c_pt', ['PT', 'EUR']), KEY)).status).toBe(201);
    await within(1000, 'created', async () => (await routes(b, { country: 'PT', currency: 'EUR' })) === 200);
    let missing = 0;
    let stop = false;
    const watcher = (async () => {
      while (!stop) if ((await routes(b, { country: 'PT', currency: 'EUR' })) !== 200) missing++;
    })();
    expect((await a.request('PATCH', '/v1/rules/c_pt', { primary_id: 'checkout', primary_weight: 1 }, KEY)).status).toBe(200);
    await within(1000, 'patched', async () => (await b.request('POST', '/v1/route', { country: 'PT', currency: 'EUR' }, KEY)).json.processor_id === 'checkout');
    stop = true;
    await watcher;
    expect(missing).toBe(0);
  });

  it('the same rule id created on two replicas at once: one 201, one 409, one rule everywhere', async () => {
    const [a, b, c] = replicas;
    for (let i = 0; i < 5; i++) {
      const id = `c_race_${i}`;
      const attrs = [['US', 'CA', 'MX', 'BR', 'AR'][i], 'USD'];
      const [ra, rb] = await Promise.all([
        a.request('POST', '/v1/rules', { ...rule(id, attrs), primary_id: 'from_a' }, KEY),
        b.request('POST', '/v1/rules', { ...rule(id, attrs), primary_id: 'from_b' }, KEY),
      ]);
      expect([ra.status, rb.status].sort()).toEqual([201, 409]);
      const loser = ra.status === 409 ? ra : rb;
      expect(loser.json.error.code).toBe('RULE_ALREADY_EXISTS');
      const winner = ra.status === 201 ? 'from_a' : 'from_b';
      for (const s of [a, b, c]) {
        await within(1000, 'winner everywhere', async () => (await s.request('GET', `/v1/rules/${id}`, undefined, KEY)).json?.primary?.processor_id === winner);
      }
    }
    const stored = await pgQuery<{ n: string }>(`SELECT count(*) AS n FROM "${schema}".entries WHERE collection = 'rules' AND id LIKE 'c_race_%'`);
    expect(Number(stored[0].n)).toBe(5);
  });

  it('two rules with the same attributes created on two replicas at once: one 201, one 409', async () => {
    const [a, c] = replicas;
    const [ra, rc] = await Promise.all([a.request('POST', '/v1/rules', rule('c_same_a', ['SE', 'SEK']), KEY), c.request('POST', '/v1/rules', rule('c_same_c', ['SE', 'SEK']), KEY)]);
    expect([ra.status, rc.status].sort()).toEqual([201, 409]);
    expect((ra.status === 409 ? ra : rc).json.error.code).toBe('RULE_ALREADY_EXISTS');
  });

  it('tier configuration and an operator override set on one replica apply on the others', async () => {
    const [a, b, c] = replicas;
    expect((await b.request('POST', '/v1/config/tiers', { error_codes: { decline: ['soft_decline_x'] } }, KEY)).status).toBe(200);
    for (const s of [a, c]) {
      await within(1000, 'configuration', async () => ((await s.request('GET', '/v1/config/tiers', undefined, KEY)).json.error_codes?.decline ?? []).includes('soft_decline_x'));
    }
    expect((await a.request('POST', '/v1/rules', rule('c_pin', ['GR', 'EUR']), KEY)).status).toBe(201);
    await within(1000, 'rule on c', async () => (await routes(c, { country: 'GR', currency: 'EUR' })) === 200);
    expect((await a.request('POST', '/v1/rules/c_pin/override', { mode: 'pin', processor_id: 'adyen', expires_in_s: 600 }, KEY)).status).toBe(201);
    await within(1000, 'pinned on c', async () => {
      const r = await c.request('POST', '/v1/route', { country: 'GR', currency: 'EUR' }, KEY);
      return r.json?.processor_id === 'adyen' && r.json?.weight === 1;
    });
    expect(((await a.request('GET', '/v1/overrides', undefined, KEY)).json as { rule_id?: string }[]).some((o) => o.rule_id === 'c_pin')).toBe(true);
    expect((await c.request('DELETE', '/v1/rules/c_pin/override', undefined, KEY)).status).toBe(200);
    await within(1000, 'override gone on a', async () => !((await a.request('GET', '/v1/overrides', undefined, KEY)).json as { rule_id?: string }[]).some((o) => o.rule_id === 'c_pin'));
    await within(1000, 'unpinned on a', async () => (await a.request('POST', '/v1/route', { country: 'GR', currency: 'EUR' }, KEY)).json?.weight !== 1);
  });

  it('a webhook registered on one replica is listed on the others', async () => {
    const [a, b, c] = replicas;
    const created = await a.request('POST', '/v1/webhooks', { url: 'https://hooks.example.com/routing', event_types: ['failover.triggered'] }, KEY);
    expect(created.status).toBe(201);
    for (const s of [b, c]) {
      await within(1000, 'webhook listed', async () =>
        ((await s.request('GET', '/v1/webhooks', undefined, KEY)).json.webhooks as { id: string }[]).some((w) => w.id === created.json.id),
      );
    }
  });

  it('a failover event recorded on one replica is listed on all', async () => {
    const [a, b, c] = replicas;
    expect((await a.request('POST', '/v1/rules', rule('c_fo', ['FI', 'EUR']), KEY)).status).toBe(201);
    await within(1000, 'rule on b', async () => (await routes(b, { country: 'FI', currency: 'EUR' })) === 200);
    const f = await b.request('POST', '/v1/rules/c_fo/failover', undefined, KEY);
    expect(f.status).toBe(200);
    for (const s of [a, b, c]) {
      await within(1000, 'failover event listed', async () => {
        const events = (await s.request('GET', '/v1/failover-events', undefined, KEY)).json;
        return Array.isArray(events) && events.some((e: { rule_id: string; reason: string }) => e.rule_id === 'c_fo' && e.reason === 'manual');
      });
    }
  });

  it("a replica whose listener connection is killed still gets the next change (the poll), and listens again", async () => {
    const [a, , c] = replicas;
    const killed = await pgQuery(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'routing-listener:r3'`);
    expect(killed.length).toBe(1);
    expect((await a.request('POST', '/v1/rules', rule('c_after_kill', ['DK', 'DKK']), KEY)).status).toBe(201);
    await within(4000, 'change after the listener was killed', async () => (await routes(c, { country: 'DK', currency: 'DKK' })) === 200);
    await within(5000, 'listener back', async () => (await pgQuery(`SELECT 1 FROM pg_stat_activity WHERE application_name = 'routing-listener:r3'`)).length === 1);
  });

  describe('PostgreSQL unreachable from one replica', () => {
    let proxy: TcpProxy;
    let d: TestServer;
    beforeAll(async () => {
      const u = new URL(pg.url);
      proxy = new TcpProxy(u.hostname, Number(u.port || 5432));
      const port = await proxy.start();
      u.host = `127.0.0.1:${port}`;
      d = await startServer({ env: env('r4', u.toString()) });
    });
    afterAll(async () => {
      await proxy.cut();
    });

    it('routes keep answering 200, writes answer 503 JSON, the gauge drops; back without restart, and it catches up', async () => {
      const [a] = replicas;
      expect((await a.request('POST', '/v1/rules', rule('c_before_cut', ['BE', 'EUR']), KEY)).status).toBe(201);
      await within(1000, 'rule on d', async () => (await routes(d, { country: 'BE', currency: 'EUR' })) === 200);
      await proxy.cut();

      for (let i = 0; i < 20; i++) expect(await routes(d, { country: 'BE', currency: 'EUR' })).toBe(200);
      const outcome = await d.request('POST', '/v1/outcome', { rule_id: 'c_before_cut', processor_id: 'stripe', success: true, latency_ms: 120 }, KEY);
      expect(outcome.status).toBe(202);
      const w = await d.request('POST', '/v1/rules', rule('c_during_cut', ['AT', 'EUR']), KEY);
      expect(w.status).toBe(503);
      expect(w.headers.get('content-type')).toContain('application/json');
      expect(w.json.error.code).toBe('STORAGE_UNAVAILABLE');
      expect((await d.request('GET', '/v1/rules/c_during_cut', undefined, KEY)).status).toBe(404);
      await within(5000, 'service_store_connected 0', async () => /service_store_connected 0/.test((await d.request('GET', '/metrics/')).text));
      expect((await d.request('GET', '/')).status).toBe(200);
      // Meanwhile another replica writes: d learns of it once PostgreSQL is back.
      expect((await a.request('POST', '/v1/rules', rule('c_while_cut', ['LU', 'EUR']), KEY)).status).toBe(201);
      expect((await a.request('DELETE', '/v1/rules/c_before_cut', undefined, KEY)).status).toBe(200);

      await proxy.restore();
      await within(10_000, 'writes accepted again', async () => (await d.request('POST', '/v1/rules', rule('c_after_cut', ['IE', 'EUR']), KEY)).status === 201);
      await within(5000, 'caught up', async () => (await routes(d, { country: 'LU', currency: 'EUR' })) === 200 && (await routes(d, { country: 'BE', currency: 'EUR' })) === 404);
      await within(5000, 'service_store_connected 1', async () => /service_store_connected 1/.test((await d.request('GET', '/metrics/')).text));
      await within(1000, 'the write after recovery reaches the others', async () => (await routes(a, { country: 'IE', currency: 'EUR' })) === 200);
    });
  });
});
