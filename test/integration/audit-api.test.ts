/** GET /v1/audit against the real server: every write recorded, newest first, paginated, per tenant, key fingerprint only. */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, stopAllServers, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/until.js';

const KEY_A = 'ka-audit-secret-1';
const KEY_A2 = 'ka-audit-secret-2';
const A = { 'X-API-Key': KEY_A };
const A2 = { 'X-API-Key': KEY_A2 };
const B = { 'X-API-Key': 'kb-audit' };
const ENV = { SERVICE_API_KEYS: `${KEY_A}:acme,${KEY_A2}:acme,kb-audit:globex`, SERVICE_TIER: '1', SERVICE_RATE_LIMIT_RPS: '0' };
const fingerprint = (k: string) => `sha256:${createHash('sha256').update(k).digest('hex').slice(0, 12)}`;
let s: TestServer;

beforeAll(async () => {
  s = await startServer({ env: ENV });
});
afterAll(stopAllServers);

describe('GET /v1/audit', () => {
  it('records every kind of write with actor fingerprint, action, target, before and after; newest first; never the key or a webhook secret', async () => {
    const rule = { rule_id: 'a_rule', attributes: ['US', 'USD'], primary_id: 'stripe', secondary_id: 'adyen' };
    expect((await s.request('POST', '/v1/rules', rule, A)).status).toBe(201);
    expect((await s.request('PATCH', '/v1/rules/a_rule', { primary_weight: 0.6 }, A2)).status).toBe(200);
    expect((await s.request('POST', '/v1/rules/a_rule/override', { mode: 'pin', processor_id: 'adyen', reason: 'test' }, A)).status).toBe(201);
    expect((await s.request('DELETE', '/v1/rules/a_rule/override', undefined, A)).status).toBe(200);
    expect((await s.request('POST', '/v1/processors/stripe/drain', {}, A)).status).toBe(201);
    expect((await s.request('DELETE', '/v1/processors/stripe/drain', undefined, A)).status).toBe(200);
    expect((await s.request('POST', '/v1/rules/a_rule/failover', undefined, A)).status).toBe(200);
    expect((await s.request('POST', '/v1/config/tiers', { prediction_enabled: true }, A)).status).toBe(200);
    const hook = await s.request('POST', '/v1/webhooks', { url: 'https://hooks.example.com/a', secret: 'hook-secret-xyz' }, A);
    expect(hook.status).toBe(201);
    expect((await s.request('DELETE', `/v1/webhooks/${hook.json.id}`, undefined, A)).status).toBe(200);
    expect((await s.request('DELETE', '/v1/rules/a_rule', undefined, A)).status).toBe(200);
    // A refused write is not recorded.
    expect((await s.request('PATCH', '/v1/rules/a_rule', { primary_weight: 0.5 }, A)).status).toBe(404);

    const r = await s.request('GET', '/v1/audit', undefined, A);
    expect(r.status).toBe(200);
    expect(r.json.map((e: { action: string }) => e.action)).toEqual([
      'rule.deleted',
      'webhook.deleted',
      'webhook.created',
      'config.updated',
      'rule.failover',
      'processor.drain_deleted',
      'processor.drained',
      'override.deleted',
      'override.set',
      'rule.updated',
      'rule.created',
    ]);
    const byAction = Object.fromEntries(r.json.map((e: { action: string }) => [e.action, e]));
    expect(byAction['rule.created']).toMatchObject({ tenant_id: 'acme', actor: fingerprint(KEY_A), target_type: 'rule', target_id: 'a_rule', before: null, after: { rule_id: 'a_rule', primary_weight: 0.9 } });
    expect(byAction['rule.updated']).toMatchObject({ actor: fingerprint(KEY_A2), before: { primary_weight: 0.9 }, after: { primary_weight: 0.6 } });
    expect(byAction['rule.deleted']).toMatchObject({ before: { rule_id: 'a_rule' }, after: null });
    expect(byAction['override.set'].after).toMatchObject({ mode: 'pin', processor_id: 'adyen', reason: 'test' });
    expect(byAction['rule.failover'].before.primary.status).toBe('healthy');
    expect(byAction['rule.failover'].after.primary.status).toBe('failed_over');
    expect(byAction['config.updated']).toMatchObject({ before: { prediction_enabled: false }, after: { prediction_enabled: true } });
    expect(Number.isNaN(Date.parse(byAction['rule.created'].timestamp))).toBe(false);
    expect(r.text).not.toContain(KEY_A);
    expect(r.text).not.toContain('hook-secret-xyz');

    // Tenant isolation: the other tenant sees none of it.
    expect((await s.request('GET', '/v1/audit', undefined, B)).json).toEqual([]);
  });

  it('paginates with limit and after, with a Link to the next page; 422 for bad parameters', async () => {
    for (let i = 0; i < 5; i++) {
      expect((await s.request('POST', '/v1/rules', { rule_id: `pg_${i}`, attributes: [`Q${'ABCDE'[i]}`], primary_id: 'p', secondary_id: 'q' }, B)).status).toBe(201);
    }
    const p1 = await s.request('GET', '/v1/audit?limit=2', undefined, B);
    expect(p1.json.map((e: { target_id: string }) => e.target_id)).toEqual(['pg_4', 'pg_3']);
    const link = p1.headers.get('link')!;
    expect(link).toMatch(/rel="next"/);
    const next = /<([^>]+)>/.exec(link)![1];
    const p2 = await s.request('GET', next, undefined, B);
    expect(p2.json.map((e: { target_id: string }) => e.target_id)).toEqual(['pg_2', 'pg_1']);
    const p3 = await s.request('GET', `/v1/audit?limit=2&after=${p2.json[1].audit_id}`, undefined, B);
    expect(p3.json.map((e: { target_id: string }) => e.target_id)).toEqual(['pg_0']);
    expect(p3.headers.get('link')).toBeNull();
    expect((await s.request('GET', '/v1/audit?limit=0', undefined, B)).json.error.fields[0].field).toBe('limit');
    expect((await s.request('GET', '/v1/audit?limit=1001', undefined, B)).status).toBe(422);
    expect((await s.request('GET', '/v1/audit?after=zzz', undefined, B)).json.error.fields[0].field).toBe('after');
  });

  it('records override expiry (actor null) and survives a restart', async () => {
    expect((await s.request('POST', '/v1/rules', { rule_id: 'exp_rule', attributes: ['FR'], primary_id: 'p', secondary_id: 'q' }, B)).status).toBe(201);
    expect((await s.request('POST', '/v1/rules/exp_rule/override', { mode: 'drain', processor_id: 'p', expires_in_s: 1 }, B)).status).toBe(201);
    await until('expiry audit', async () => (await s.request('GET', '/v1/audit?limit=1', undefined, B)).json[0]?.action === 'override.expired', 5000);
    const top = (await s.request('GET', '/v1/audit?limit=1', undefined, B)).json[0];
    expect(top).toMatchObject({ actor: null, target_id: 'exp_rule', before: { mode: 'drain' }, after: null });
    const count = (await s.request('GET', '/v1/audit?limit=1000', undefined, B)).json.length;
    await s.stop();
    s = await startServer({ dataDir: s.dataDir, env: ENV });
    expect((await s.request('GET', '/v1/audit?limit=1000', undefined, B)).json.length).toBe(count);
  });
});
