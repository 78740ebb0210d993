/** /v1/rules against the real server: shapes, defaults, normalization, duplicates, deletion. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, stopAllServers, type TestServer } from '../helpers/server.js';

let s: TestServer;
beforeAll(async () => {
  s = await startServer({ env: { SERVICE_TIER: '1' } });
});
afterAll(stopAllServers);

const rule = (rule_id: string, attributes: string[], extra: Record<string, unknown> = {}) => ({
  rule_id,
  attributes,
  primary_id: 'stripe',
  secondary_id: 'adyen',
  ...extra,
});

describe('POST /v1/rules', () => {
  it('creates a rule: 201 with the output shape, names defaulting to ids and primary_weight to 0.9', async () => {
    const r = await s.request('POST', '/v1/rules', rule('r_shape', ['AA', 'EUR', 'card']));
    expect(r.status).toBe(201);
    expect(r.headers.get('content-type')).toContain('application/json');
    expect(r.json).toMatchObject({
      rule_id: 'r_shape',
      attributes: ['AA', 'EUR', 'card', '*', '*', '*'],
      primary: { processor_id: 'stripe', name: 'stripe' },
      secondary: { processor_id: 'adyen', name: 'adyen' },
      primary_weight: 0.9,
    });
    expect(r.json.secondary_weight).toBeCloseTo(0.1, 10);
    expect(typeof r.json.created_at).toBe('string');
    expect(Number.isNaN(Date.parse(r.json.created_at))).toBe(false);
  });

  it('keeps given names and weight; secondary_weight is 1 - primary_weight', async () => {
    const r = await s.request(
      'POST',
      '/v1/rules',
      rule('r_named', ['AB', 'EUR'], { primary_name: 'Stripe Inc.', secondary_name: 'Adyen N.V.', primary_weight: 0.75 }),
    );
    expect(r.status).toBe(201);
    expect(r.json.primary).toEqual({ processor_id: 'stripe', name: 'Stripe Inc.' });
    expect(r.json.secondary).toEqual({ processor_id: 'adyen', name: 'Adyen N.V.' });
    expect(r.json.primary_weight).toBe(0.75);
    expect(r.json.secondary_weight).toBeCloseTo(0.25, 10);
  });

  it('normalizes attributes: country and currency upper case, the others lower case', async () => {
    const r = await s.request('POST', '/v1/rules', rule('r_case', ['ac', 'eur', 'CARD', 'VISA', 'One_Time', 'Micro']));
    expect(r.status).toBe(201);
    expect(r.json.attributes).toEqual(['AC', 'EUR', 'card', 'visa', 'one_time', 'micro']);
  });

  it('accepts an empty attribute list as the catch-all rule (six wildcards)', async () => {
    const r = await s.request('POST', '/v1/rules', rule('r_all_wild', []));
    expect(r.status).toBe(201);
    expect(r.json.attributes).toEqual(['*', '*', '*', '*', '*', '*']);
    const del = await s.request('DELETE', '/v1/rules/r_all_wild');
    expect(del.status).toBe(200);
  });

  it('rejects a duplicate rule id with 409', async () => {
    expect((await s.request('POST', '/v1/rules', rule('r_dup', ['AD', 'EUR']))).status).toBe(201);
    const r = await s.request('POST', '/v1/rules', rule('r_dup', ['AE', 'GBP']));
    expect(r.status).toBe(409);
    expect(r.json.error).toMatchObject({ code: 'RULE_ALREADY_EXISTS', status: 409 });
    expect(r.json.error.fields.map((f: { field: string }) => f.field)).toContain('rule_id');
  });

  it('two concurrent creates of one id: exactly one 201 and one 409', async () => {
    const [a, b] = await Promise.all([
      s.request('POST', '/v1/rules', rule('r_race', ['AF', 'EUR'])),
      s.request('POST', '/v1/rules', rule('r_race', ['AG', 'EUR'])),
    ]);
    expect([a.status, b.status].sort()).toEqual([201, 409]);
    const list = await s.request('GET', '/v1/rules');
    expect(list.json.filter((x: { rule_id: string }) => x.rule_id === 'r_race')).toHaveLength(1);
  });

  it('padding equivalence: 3 attributes and the same padded with three `*` are one key (409 on the second)', async () => {
    expect((await s.request('POST', '/v1/rules', rule('r_pad_short', ['AH', 'EUR', 'card']))).status).toBe(201);
    const r = await s.request('POST', '/v1/rules', rule('r_pad_long', ['AH', 'EUR', 'card', '*', '*', '*']));
    expect(r.status).toBe(409);
    expect(r.json?.error?.status).toBe(409);
  });

  it('equivalent attributes differing only in case are one key too (409)', async () => {
    expect((await s.request('POST', '/v1/rules', rule('r_case_a', ['AI', 'EUR', 'wallet']))).status).toBe(201);
    const r = await s.request('POST', '/v1/rules', rule('r_case_b', ['ai', 'eur', 'WALLET']));
    expect(r.status).toBe(409);
  });

  it('deleting one rule never stops another rule from routing', async () => {
    // Whatever the create answers for an equivalent key, the first rule must keep routing
    // after the second is deleted.
    expect((await s.request('POST', '/v1/rules', rule('r_keep', ['AJ', 'EUR']))).status).toBe(201);
    const second = await s.request('POST', '/v1/rules', rule('r_shadowing', ['AJ', 'EUR', '*']));
    if (second.status === 201) await s.request('DELETE', '/v1/rules/r_shadowing');
    const route = await s.request('POST', '/v1/route', { country: 'AJ', currency: 'EUR' });
    expect(route.status).toBe(200);
    expect(route.json.rule_id).toBe('r_keep');
  });
});

describe('GET /v1/rules', () => {
  it('lists the rules (sorted by id) in the output shape', async () => {
    await s.request('POST', '/v1/rules', rule('r_list_b', ['AK', 'EUR']));
    await s.request('POST', '/v1/rules', rule('r_list_a', ['AL', 'EUR']));
    const r = await s.request('GET', '/v1/rules');
    expect(r.status).toBe(200);
    expect(Array.isArray(r.json)).toBe(true);
    const ids: string[] = r.json.map((x: { rule_id: string }) => x.rule_id);
    expect(ids).toEqual([...ids].sort());
    expect(ids.indexOf('r_list_a')).toBeLessThan(ids.indexOf('r_list_b'));
    for (const x of r.json) {
      expect(Object.keys(x)).toEqual(
        expect.arrayContaining(['rule_id', 'attributes', 'primary', 'secondary', 'primary_weight', 'secondary_weight']),
      );
      expect(x.attributes).toHaveLength(6);
      expect(Object.keys(x.primary).sort()).toEqual(['name', 'processor_id']);
      expect(Object.keys(x.secondary).sort()).toEqual(['name', 'processor_id']);
    }
  });
});

describe('DELETE /v1/rules/{rule_id}', () => {
  it('deletes: 200 {deleted}, gone from the list and from routing; a second delete is 404', async () => {
    expect((await s.request('POST', '/v1/rules', rule('r_del', ['AM', 'EUR']))).status).toBe(201);
    expect((await s.request('POST', '/v1/route', { country: 'AM', currency: 'EUR' })).status).toBe(200);

    const del = await s.request('DELETE', '/v1/rules/r_del');
    expect(del.status).toBe(200);
    expect(del.json).toEqual({ deleted: 'r_del' });

    const list = await s.request('GET', '/v1/rules');
    expect(list.json.map((x: { rule_id: string }) => x.rule_id)).not.toContain('r_del');
    const route = await s.request('POST', '/v1/route', { country: 'AM', currency: 'EUR' });
    expect(route.status).toBe(404);

    const again = await s.request('DELETE', '/v1/rules/r_del');
    expect(again.status).toBe(404);
    expect(again.json.error).toMatchObject({ code: 'RULE_NOT_FOUND', status: 404 });
  });

  it('two concurrent deletes of one rule: exactly one 200 and one 404', async () => {
    for (let i = 0; i < 10; i++) {
      const id = `r_del_race_${i}`;
      expect((await s.request('POST', '/v1/rules', rule(id, ['AR', 'EUR', 'card', `c${i}`]))).status).toBe(201);
      const [a, b] = await Promise.all([s.request('DELETE', `/v1/rules/${id}`), s.request('DELETE', `/v1/rules/${id}`)]);
      expect({ id, statuses: [a.status, b.status].sort() }).toEqual({ id, statuses: [200, 404] });
    }
  });

  it('the id can be created again after deletion', async () => {
    expect((await s.request('POST', '/v1/rules', rule('r_reuse', ['AN', 'EUR']))).status).toBe(201);
    expect((await s.request('DELETE', '/v1/rules/r_reuse')).status).toBe(200);
    const r = await s.request('POST', '/v1/rules', rule('r_reuse', ['AN', 'EUR'], { primary_id: 'checkout' }));
    expect(r.status).toBe(201);
    const route = await s.request('POST', '/v1/route', { country: 'AN', currency: 'EUR' });
    expect(route.status).toBe(200);
    expect(route.json.rule_id).toBe('r_reuse');
    expect([route.json.processor_id, route.json.fallback_processor_id].sort()).toEqual(['adyen', 'checkout']);
  });

  it('ids with the allowed punctuation (. : - _) round-trip through a percent-encoded path', async () => {
    const id = 'acme.rule:v1-eu_x';
    expect((await s.request('POST', '/v1/rules', rule(id, ['AP', 'EUR']))).status).toBe(201);
    const del = await s.request('DELETE', `/v1/rules/${encodeURIComponent(id)}`);
    expect(del.status).toBe(200);
    expect(del.json).toEqual({ deleted: id });
  });

  it('an outcome for a deleted rule is rejected (422 naming rule_id)', async () => {
    expect((await s.request('POST', '/v1/rules', rule('r_gone', ['AQ', 'EUR']))).status).toBe(201);
    expect((await s.request('DELETE', '/v1/rules/r_gone')).status).toBe(200);
    const r = await s.request('POST', '/v1/outcome', { rule_id: 'r_gone', processor_id: 'stripe', success: true, latency_ms: 1 });
    expect(r.status).toBe(422);
    expect(r.json.error.fields.map((f: { field: string }) => f.field)).toContain('rule_id');
  });

  it('stats follow creation and deletion (trie.total_rules, total_nodes back to where it was)', async () => {
    const before = (await s.request('GET', '/v1/stats')).json;
    expect((await s.request('POST', '/v1/rules', rule('r_stats', ['AO', 'EUR', 'card', 'visa']))).status).toBe(201);
    const mid = (await s.request('GET', '/v1/stats')).json;
    expect(mid.trie.total_rules).toBe(before.trie.total_rules + 1);
    expect(mid.trie.total_nodes).toBeGreaterThan(before.trie.total_nodes);
    expect((await s.request('DELETE', '/v1/rules/r_stats')).status).toBe(200);
    const after = (await s.request('GET', '/v1/stats')).json;
    expect(after.trie).toEqual(before.trie);
  });
});

describe('consistency', () => {
  it('GET /v1/stats trie.total_rules equals the number of rules GET /v1/rules lists', async () => {
    const [stats, list] = await Promise.all([s.request('GET', '/v1/stats'), s.request('GET', '/v1/rules')]);
    expect(stats.json.trie.total_rules).toBe(list.json.length);
  });
});
