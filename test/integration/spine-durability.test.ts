/**
 * Durability against the real server: what was acknowledged (201/200) is there after a
 * graceful restart (SIGTERM) and after a crash (SIGKILL) on the same data directory.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeTempDir, startServer, stopAllServers, type TestServer } from '../helpers/server.js';

afterAll(stopAllServers);

const rule = (rule_id: string, country: string, extra: Record<string, unknown> = {}) => ({
  rule_id,
  attributes: [country, 'EUR', 'card'],
  primary_id: 'p1',
  secondary_id: 'p2',
  ...extra,
});

async function ruleIds(s: TestServer): Promise<string[]> {
  const r = await s.request('GET', '/v1/rules');
  expect(r.status).toBe(200);
  return r.json.map((x: { rule_id: string }) => x.rule_id);
}

describe('restart on the same data directory', () => {
  it('SIGTERM: exits 0; the acknowledged rule is listed and routes after the restart', async () => {
    const a = await startServer();
    const created = await a.request('POST', '/v1/rules', rule('term_rule', 'FR', { primary_name: 'P One', primary_weight: 1 }));
    expect(created.status).toBe(201);
    expect(await a.stop('SIGTERM')).toBe(0);

    const b = await startServer({ dataDir: a.dataDir });
    const list = await b.request('GET', '/v1/rules');
    const stored = list.json.find((x: { rule_id: string }) => x.rule_id === 'term_rule');
    // The rule comes back exactly as it was acknowledged.
    expect(stored).toEqual(created.json);
    const route = await b.request('POST', '/v1/route', { country: 'FR', currency: 'EUR' });
    expect(route.status).toBe(200);
    expect(route.json).toMatchObject({ rule_id: 'term_rule', processor_id: 'p1' });
    const stats = (await b.request('GET', '/v1/stats')).json;
    expect(stats.trie.total_rules).toBe(1);
    await b.stop();
  });

  it('SIGKILL right after the 201s: every acknowledged rule survives', async () => {
    const a = await startServer();
    const n = 20;
    const results = await Promise.all(
      Array.from({ length: n }, (_, i) => a.request('POST', '/v1/rules', rule(`kill_${i}`, `K${String.fromCharCode(65 + i)}`))),
    );
    const acked = results.filter((r) => r.status === 201).map((r) => r.json.rule_id as string);
    expect(acked).toHaveLength(n);
    await a.kill9();
    expect(a.proc.signalCode).toBe('SIGKILL');

    const b = await startServer({ dataDir: a.dataDir });
    expect((await ruleIds(b)).sort()).toEqual([...acked].sort());
    const route = await b.request('POST', '/v1/route', { country: 'KA', currency: 'EUR' });
    expect(route.status).toBe(200);
    expect(route.json.rule_id).toBe('kill_0');
    await b.kill9();
  });

  it('SIGKILL after an acknowledged delete: the rule stays deleted', async () => {
    const a = await startServer();
    expect((await a.request('POST', '/v1/rules', rule('gone', 'GA'))).status).toBe(201);
    expect((await a.request('POST', '/v1/rules', rule('kept', 'GB'))).status).toBe(201);
    expect((await a.request('DELETE', '/v1/rules/gone')).status).toBe(200);
    await a.kill9();

    const b = await startServer({ dataDir: a.dataDir });
    expect(await ruleIds(b)).toEqual(['kept']);
    expect((await b.request('POST', '/v1/route', { country: 'GA', currency: 'EUR' })).status).toBe(404);
    // The id is free again after the restart.
    expect((await b.request('POST', '/v1/rules', rule('gone', 'GA'))).status).toBe(201);
    await b.stop();
  });

  it('restarting twice (SIGKILL then SIGTERM) keeps rules of both lifetimes, per tenant', async () => {
    const keys = { SERVICE_API_KEYS: 'ka:acme,kb:globex' };
    const a = await startServer({ env: keys });
    expect((await a.request('POST', '/v1/rules', rule('first', 'HA'), { 'X-API-Key': 'ka' })).status).toBe(201);
    await a.kill9();
    const b = await startServer({ env: keys, dataDir: a.dataDir });
    expect((await b.request('POST', '/v1/rules', rule('second', 'HB'), { 'X-API-Key': 'kb' })).status).toBe(201);
    expect(await b.stop()).toBe(0);
    const c = await startServer({ env: keys, dataDir: a.dataDir });
    const acme = await c.request('GET', '/v1/rules', undefined, { 'X-API-Key': 'ka' });
    const globex = await c.request('GET', '/v1/rules', undefined, { 'X-API-Key': 'kb' });
    expect(acme.json.map((x: { rule_id: string }) => x.rule_id)).toEqual(['first']);
    expect(globex.json.map((x: { rule_id: string }) => x.rule_id)).toEqual(['second']);
    await c.stop();
  });

  it('counters are answered after a restart (integers, not carried over as garbage)', async () => {
    const a = await startServer();
    expect((await a.request('POST', '/v1/rules', rule('cnt', 'IA'))).status).toBe(201);
    expect((await a.request('POST', '/v1/route', { country: 'IA', currency: 'EUR' })).status).toBe(200);
    expect((await a.request('POST', '/v1/outcome', { rule_id: 'cnt', processor_id: 'p1', success: true, latency_ms: 5 })).status).toBe(202);
    const st = (await a.request('GET', '/v1/stats')).json;
    expect(st.transactions_routed).toBe(1);
    expect(st.transactions_reported).toBe(1);
    await a.stop();
    const b = await startServer({ dataDir: a.dataDir });
    const st2 = (await b.request('GET', '/v1/stats')).json;
    expect(Number.isInteger(st2.transactions_routed)).toBe(true);
    expect(Number.isInteger(st2.transactions_reported)).toBe(true);
    expect(st2.trie.total_rules).toBe(1);
    await b.stop();
  });
});

describe('data directory', () => {
  it('starts on an existing empty directory and on one that does not exist yet', async () => {
    const a = await startServer({ dataDir: makeTempDir('spine-empty-') });
    expect((await a.request('POST', '/v1/rules', rule('x', 'JA'))).status).toBe(201);
    await a.stop();
    const b = await startServer({ dataDir: join(makeTempDir('spine-parent-'), 'not', 'yet') });
    expect((await b.request('POST', '/v1/rules', rule('x', 'JA'))).status).toBe(201);
    await b.stop();
  });

  it('starts on a data directory whose name contains a dot, and keeps its rules there', async () => {
    const dir = join(makeTempDir('spine-dot-'), 'data.v1');
    mkdirSync(dir);
    const a = await startServer({ dataDir: dir, readyTimeoutMs: 15_000 });
    expect((await a.request('POST', '/v1/rules', rule('dotted', 'KA'))).status).toBe(201);
    await a.kill9();
    const b = await startServer({ dataDir: dir });
    expect(await ruleIds(b)).toEqual(['dotted']);
    await b.stop();
  });
});
