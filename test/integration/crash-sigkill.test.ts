/**
 * Crash safety: SIGKILL in the middle of a write-heavy load (concurrent rule creations and
 * deletions, webhook registrations, outcomes, configuration changes), then a restart on the
 * same data directory. Every acknowledged write is there (and every acknowledged delete is
 * gone), nothing appears that was never sent, the store opens cleanly, and a webhook delivery
 * that was pending at the kill (its receiver answered 500 until then) is resumed and delivered.
 */
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, stopAllServers, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/until.js';

const KEY = 'kcrash-91c3e07d';
const H = { 'x-api-key': KEY, 'content-type': 'application/json' };
const COUNTRIES = ['DE', 'FR', 'IT', 'ES', 'NL', 'BE', 'AT', 'PT'];

let receiver: Server;
let receiverOk = false;
const hits: { path: string; body: string; at: number }[] = [];


beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      hits.push({ path: req.url ?? '', body, at: Date.now() });
      res.writeHead(receiverOk ? 200 : 500).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
});

afterAll(async () => {
  await stopAllServers();
  await new Promise((r) => receiver?.close(r));
});

/** One request; `undefined` when the connection failed (the server died under it). */
async function post(s: TestServer, method: string, path: string, body?: unknown): Promise<{ status: number; json: any } | undefined> {
  try {
    const res = await fetch(s.baseUrl + path, { method, headers: H, body: body === undefined ? undefined : JSON.stringify(body), signal: AbortSignal.timeout(10_000) });
    const text = await res.text();
    return { status: res.status, json: text ? JSON.parse(text) : undefined };
  } catch {
    return undefined;
  }
}

describe('SIGKILL under a write-heavy load', () => {
  it('keeps every acknowledged write and resumes the pending delivery', async () => {
    const env = {
      SERVICE_API_KEYS: `${KEY}:crash`,
      SERVICE_RATE_LIMIT_RPS: '0',
      SERVICE_WEBHOOK_ALLOW_PRIVATE: '1',
      SERVICE_WEBHOOK_BACKOFF_MS: '4000,4000', // the delivery stays pending across the kill
      SERVICE_EVAL_INTERVAL_MS: '1000',
    };
    const s = await startServer({ env });
    const port = (receiver.address() as { port: number }).port;

    // A delivery that is pending at the kill: a failover, announced to a receiver that fails.
    const w0 = await post(s, 'POST', '/v1/webhooks', { url: `http://127.0.0.1:${port}/w0`, secret: 'crash-secret-0001', event_types: ['failover.triggered'] });
    expect(w0?.status).toBe(201);
    const hookId: string = w0!.json.id;
    expect((await post(s, 'POST', '/v1/rules', { rule_id: 'base', attributes: ['US', 'USD', 'card'], primary_id: 'p1', secondary_id: 'p2' }))?.status).toBe(201);
    for (let i = 0; i < 12; i++) {
      expect((await post(s, 'POST', '/v1/outcome', { rule_id: 'base', processor_id: 'p1', success: false, latency_ms: 20, error_code: 'timeout' }))?.status).toBe(202);
    }
    const pending = await until('a pending delivery with a failed attempt', async () => {
      const r = await post(s, 'GET', `/v1/webhooks/${hookId}/deliveries?status=pending`);
      const d = r?.json?.deliveries?.[0];
      return d && d.attempts.length >= 1 && d;
    });
    expect(hits.filter((h) => h.path === '/w0').length).toBeGreaterThanOrEqual(1);

    // The load: every worker records what was acknowledged and what was in flight at the end.
    const acked = { rules: new Set<string>(), deleted: new Set<string>(), hooks: new Set<string>(), outcomes: 0, config: [] as number[] };
    const sent = { rules: new Set<string>(), deletes: new Set<string>(), hooks: 0, outcomes: 0, config: [] as number[] };
    let stop = false;
    let failures = 0;
    const ruleWorker = async (w: number) => {
      for (let i = 0; !stop; i++) {
        const id = `ld_${w}_${i}`;
        sent.rules.add(id);
        const r = await post(s, 'POST', '/v1/rules', { rule_id: id, attributes: [COUNTRIES[w % COUNTRIES.length], 'EUR', 'card', `c${i}`], primary_id: 'p1', secondary_id: 'p2' });
        if (r === undefined) return void failures++;
        expect(r.status, JSON.stringify(r.json)).toBe(201);
        acked.rules.add(id);
        if (i % 3 === 2) {
          const victim = `ld_${w}_${i - 1}`;
          sent.deletes.add(victim);
          const d = await post(s, 'DELETE', `/v1/rules/${victim}`);
          if (d === undefined) return void failures++;
          expect(d.status).toBe(200);
          acked.deleted.add(victim);
        }
      }
    };
    const hookWorker = async () => {
      for (let i = 0; !stop && acked.hooks.size < 40; i++) {
        sent.hooks++;
        const r = await post(s, 'POST', '/v1/webhooks', { url: `http://127.0.0.1:${port}/ld${i}`, secret: `ld-secret-${i}-xxxx`, event_types: ['processor.healthy'] });
        if (r === undefined) return void failures++;
        expect(r.status).toBe(201);
        acked.hooks.add(r.json.id);
      }
    };
    const outcomeWorker = async () => {
      while (!stop) {
        sent.outcomes++;
        const r = await post(s, 'POST', '/v1/outcome', { rule_id: 'base', processor_id: 'p2', success: true, latency_ms: 50 });
        if (r === undefined) return void failures++;
        expect(r.status).toBe(202);
        acked.outcomes++;
      }
    };
    const configWorker = async () => {
      for (let v = 11; !stop; v++) {
        sent.config.push(v);
        const r = await post(s, 'POST', '/v1/config/tiers', { thresholds: { run_length: v }, shadow_mode: v % 2 === 0 });
        if (r === undefined) return void failures++;
        expect(r.status).toBe(200);
        acked.config.push(v);
      }
    };
    const workers = [0, 1, 2, 3].map(ruleWorker).concat([hookWorker(), outcomeWorker(), outcomeWorker(), configWorker()]);
    await until('some load acknowledged', async () => acked.rules.size >= 40 && acked.config.length >= 5 && acked.hooks.size >= 5, 20_000);
    await s.kill9(); // in the middle of it
    stop = true;
    await Promise.all(workers);
    expect(s.proc.signalCode).toBe('SIGKILL');
    console.log(
      `acknowledged before SIGKILL: ${acked.rules.size} rule creations, ${acked.deleted.size} deletions, ${acked.hooks.size} webhooks, ` +
        `${acked.outcomes} outcomes, ${acked.config.length} config changes; ${failures} requests cut by the kill`,
    );

    // Restart on the same data, with the receiver now answering 200. Counted before the restart:
    // the service resumes deliveries before it listens, so the retry may land before it answers.
    const before = hits.filter((h) => h.path === '/w0').length;
    receiverOk = true;
    const s2 = await startServer({ dataDir: s.dataDir, env });
    expect((await post(s2, 'GET', '/'))?.status).toBe(200);
    expect(s2.output()).not.toMatch(/"level":"error"/);

    const rules = (await post(s2, 'GET', '/v1/rules'))!.json as { rule_id: string; attributes: string[] }[];
    const ids = new Set(rules.map((r) => r.rule_id));
    // (A delete in flight at the kill may or may not have been committed.)
    for (const id of acked.rules) if (!sent.deletes.has(id)) expect(ids.has(id), `acknowledged rule ${id}`).toBe(true);
    for (const id of acked.deleted) expect(ids.has(id), `acknowledged delete of ${id}`).toBe(false);
    for (const id of ids) expect(id === 'base' || sent.rules.has(id), `rule ${id} was never sent`).toBe(true);
    const st = (await post(s2, 'GET', '/v1/stats'))!.json;
    expect(st.trie.total_rules).toBe(rules.length);
    // The live view is the stored one: an acknowledged rule routes.
    const some = rules.find((r) => r.rule_id.startsWith('ld_'))!;
    const route = await post(s2, 'POST', '/v1/route', { country: some.attributes[0], currency: 'EUR', card_type: some.attributes[3] });
    expect(route?.status).toBe(200);
    expect(route!.json.rule_id).toBe(some.rule_id);

    const hooks = (await post(s2, 'GET', '/v1/webhooks'))!.json.webhooks as { id: string }[];
    const hookIds = new Set(hooks.map((h) => h.id));
    for (const id of acked.hooks) expect(hookIds.has(id), `acknowledged webhook ${id}`).toBe(true);
    expect(hooks.length).toBeLessThanOrEqual(1 + sent.hooks);

    // The configuration is the last acknowledged one, or one sent after it (committed, answer lost).
    const cfg = (await post(s2, 'GET', '/v1/config/tiers'))!.json;
    const lastAcked = acked.config[acked.config.length - 1];
    expect(sent.config.filter((v) => v >= lastAcked)).toContain(cfg.threshold_overrides.run_length);
    expect(cfg.shadow_mode).toBe(cfg.threshold_overrides.run_length % 2 === 0);

    // Counters are checkpointed each cycle: never more than was sent.
    expect(st.transactions_reported).toBeLessThanOrEqual(12 + sent.outcomes);
    // The audit trail kept the failover.
    expect((await post(s2, 'GET', '/v1/failover-events'))!.json.length).toBeGreaterThanOrEqual(1);

    // The pending delivery resumes and is delivered (same delivery id, same event).
    const delivered = await until('the resumed delivery', async () => {
      const r = await post(s2, 'GET', `/v1/webhooks/${hookId}/deliveries/${pending.id}`);
      return r?.json?.status === 'delivered' && r.json;
    });
    expect(hits.filter((h) => h.path === '/w0').length).toBeGreaterThan(before);
    expect(delivered.attempts.at(-1).status_code).toBe(200);
    expect(JSON.parse(hits.filter((h) => h.path === '/w0').at(-1)!.body).event_id).toBe(pending.event_id);
    await s2.stop();
  });
});
