/**
 * The benchmarks' targets answer correctly (not how fast): the seeded bench server routes the
 * generated requests to a processor of the rule the trie should match and accepts the
 * generated outcomes, and the bare uWS ceiling answers its fixed body. If these broke, the
 * benchmarks would happily measure 4xx replies.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { matchRoute } from '../../src/routing/decide.js';
import type { RouteRequest } from '../../src/schemas/routing.js';
import { settingsForTier, Tenant } from '../../src/tenants/tenant.js';
import { startChild, type Child } from '../../bench/lib/processes.js';
import { apiKeysFor, outcomeRequests, routeRequests, sampleRules, withTransactionIds } from '../../bench/lib/requests.js';
import { seed, type Seeded } from '../../bench/lib/seed.js';
import { REPO_ROOT, startServer, stopAllServers, type TestServer } from '../helpers/server.js';

const RULES = 1000;
const TENANTS = 5;

let dir: string;
let seeded: Seeded;
let server: TestServer;
const children: Child[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bench-targets-'));
  seeded = await seed(dir, { rules: RULES, tenants: TENANTS });
  // As the benchmarks start it (cycle-bench also switches the per-key rate limit off).
  server = await startServer({ dataDir: dir, env: { SERVICE_API_KEYS: apiKeysFor(seeded.tenants), SERVICE_RATE_LIMIT_RPS: '0' } });
});

afterAll(async () => {
  await Promise.all(children.map((c) => c.stop()));
  await stopAllServers();
  rmSync(dir, { recursive: true, force: true });
});

const json = (headers: Record<string, string>): Record<string, string> => ({ ...headers, 'content-type': 'application/json' });

describe('benchmark targets', () => {
  it('POST /v1/route answers 200 with a processor of the rule the trie matches, for every generated request', async () => {
    // The expected match, from the same trie code in-process (every tenant holds the same rules).
    const expected = new Tenant('expected', settingsForTier(1, false));
    seeded.rules.forEach((record, slot) => expected.addRule({ record, slot, runStartedAt: [0, 0], override: null, cache: null }));
    const reqs = routeRequests(sampleRules(seeded.rules), seeded.tenants.length);
    expect(new Set(reqs.map((r) => r.headers['x-api-key'])).size).toBe(TENANTS);
    for (const q of reqs) {
      const body = JSON.parse(q.body) as RouteRequest;
      const rule = matchRoute(expected, body)?.rule.record;
      expect(rule, q.body).toBeDefined();
      const r = await server.request(q.method, q.path, q.body, json(q.headers));
      expect(r.status, r.text).toBe(200);
      expect(r.json.rule_id).toBe(rule!.rule_id);
      expect([rule!.primary_id, rule!.secondary_id]).toContain(r.json.processor_id);
      expect(r.json.fallback_processor_id).not.toBe(r.json.processor_id);
    }
  });

  it('the route requests with a transaction_id (bench:compare\'s route-with-id) answer 200, each recorded under its own id', async () => {
    const route = routeRequests(sampleRules(seeded.rules, 10), seeded.tenants.length);
    const reqs = withTransactionIds(route, 2);
    expect(reqs).toHaveLength(20);
    expect(new Set(reqs.map((q) => JSON.parse(q.body).transaction_id)).size).toBe(20);
    for (const q of reqs) {
      const r = await server.request(q.method, q.path, q.body, json(q.headers));
      expect(r.status, r.text).toBe(200);
      const id = JSON.parse(q.body).transaction_id as string;
      const d = await server.request('GET', `/v1/decisions/${id}`, undefined, q.headers);
      expect(d.status, d.text).toBe(200);
      expect(d.json.decision.rule_id).toBe(r.json.rule_id);
    }
  });

  it('POST /v1/outcome answers 202 for the generated reports', async () => {
    const reqs = outcomeRequests(seeded.rules, seeded.tenants.length);
    expect(reqs).toHaveLength(seeded.rules.length * TENANTS);
    // A spread sample: every tenant, primary and secondary, approvals and declines.
    for (let i = 0; i < reqs.length; i += 7) {
      const q = reqs[i];
      const r = await server.request(q.method, q.path, q.body, json(q.headers));
      expect(r.status, r.text).toBe(202);
      const report = JSON.parse(q.body);
      expect(r.json.classification).toBe(report.success ? 'success' : 'decline');
    }
  });

  it('the bare uWS ceiling answers the fixed body', async () => {
    const body = JSON.stringify({ processor_id: 'p1', weight: 0.9, fallback_processor_id: 'p2', decision_source: 'rules', failure_probability: null, rule_id: 'r1' });
    // The compiled ceiling, as the benchmarks run it (bench/lib's DIST is only right from dist/).
    const bare = await startChild(join(REPO_ROOT, 'dist/bench/bare-uws.js'), { BARE_BODY: body }, 30_000);
    children.push(bare);
    for (const q of routeRequests(sampleRules(seeded.rules, 5), 1)) {
      const r = await fetch(bare.url + q.path, { method: 'POST', headers: json(q.headers), body: q.body });
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toBe('application/json');
      expect(await r.text()).toBe(body);
    }
  });
});
