/**
 * The metrics render thread in the real server: the per-rule families it renders are byte for
 * byte what the front thread renders for the same state (the fallback), the gzip answer is one
 * member (curl --compressed reads only the first) of the same text, and when the thread dies
 * (ended from outside through the inspector, as a crash would) the next scrape is rendered on
 * the front thread, the failure is logged and counted, and a new thread takes over.
 * Which thread rendered a scrape is read from `service_metrics_renderings_total{thread}` in the
 * scrape after it (a scrape counts the renderings finished before its own).
 */
import { spawnSync } from 'node:child_process';
import { get } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/free-port.js';
import { exitWorkerThread } from '../helpers/inspector.js';
import { startServer, stopAllServers, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/until.js';

const FIRST_FAMILY = '# HELP service_processor_health_status ';
let s: TestServer;
let inspectPort: number;

const keys = { acme: { 'X-API-Key': 'k-acme' }, beta: { 'X-API-Key': 'k-beta' } };

beforeAll(async () => {
  inspectPort = await freePort();
  s = await startServer({
    env: {
      SERVICE_API_KEYS: 'k-acme:acme,k-beta:beta',
      SERVICE_TIER: '3',
      SERVICE_RATE_LIMIT_RPS: '0',
      // No periodic evaluation during the test: the state changes only when the test says so.
      SERVICE_EVAL_INTERVAL_MS: '600000',
      NODE_OPTIONS: `--inspect=127.0.0.1:${inspectPort}`,
    },
  });
  const post = async (path: string, body: unknown, h: Record<string, string>, status: number) => {
    const r = await s.request('POST', path, body, h);
    expect(r.status, `${path} ${JSON.stringify(body)}: ${r.text}`).toBe(status);
  };
  for (const [tenant, n] of [['acme', 30], ['beta', 5]] as const) {
    for (let i = 0; i < n; i++) {
      const self = i === 3; // a self-fallback rule: one processor, its counters summed
      await post('/v1/rules', { rule_id: `r${i}`, attributes: ['US', 'USD', 'card', `ct${i}`], primary_id: `p${i % 4}`, secondary_id: self ? `p${i % 4}` : `s${i % 3}` }, keys[tenant], 201);
      await post('/v1/route', { country: 'US', currency: 'USD', payment_method: 'card', card_type: `ct${i}` }, keys[tenant], 200);
      if (i % 5 === 4) continue; // some rules never see an outcome
      const outcome = (processor_id: string, success: boolean, error_code?: string) =>
        post('/v1/outcome', { rule_id: `r${i}`, processor_id, success, latency_ms: 40 + i * 7, ...(error_code && { error_code }) }, keys[tenant], 202);
      await outcome(`p${i % 4}`, true);
      await outcome(`p${i % 4}`, false, 'insufficient_funds');
      if (!self && i % 2 === 0) await outcome(`s${i % 3}`, false, 'processor_error');
    }
  }
  // A hard outage of acme's r0 primary: an early evaluation fails it over (health 0), and
  // evaluates the tenant (probabilities, bandit weights) without waiting for the cycle.
  for (let i = 0; i < 12; i++) await post('/v1/outcome', { rule_id: 'r0', processor_id: 'p0', success: false, error_code: 'timeout', latency_ms: 3000 }, keys.acme, 202);
  await until('the early evaluation', async () => (await scrape()).includes('service_processor_health_status{rule_id="r0",processor_id="p0",tenant_id="acme"} 0\n'), 30_000);
}, 120_000);
afterAll(stopAllServers);

async function scrape(): Promise<string> {
  const r = await s.request('GET', '/metrics/');
  expect(r.status).toBe(200);
  return r.text;
}

const renderings = (text: string, thread: 'render' | 'front') => Number(new RegExp(`^service_metrics_renderings_total\\{thread="${thread}"\\} (\\d+)$`, 'm').exec(text)?.[1] ?? 0);

/** A scrape, and which thread rendered its per-rule families (read from the scrape after it). */
async function scrapeWithThread(): Promise<{ text: string; thread: 'render' | 'front' }> {
  const text = await scrape();
  const next = await scrape();
  return { text, thread: renderings(next, 'render') > renderings(text, 'render') ? 'render' : 'front' };
}

const perRule = (text: string) => text.slice(text.indexOf(FIRST_FAMILY));

function gzipScrape(): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    get(`${s.baseUrl}/metrics/`, { headers: { 'Accept-Encoding': 'gzip' } }, (res) => {
      expect(res.headers['content-encoding']).toBe('gzip');
      const parts: Buffer[] = [];
      res.on('data', (b: Buffer) => parts.push(b));
      res.on('end', () => resolve(Buffer.concat(parts)));
    }).on('error', reject);
  });
}

describe('the metrics render thread in the server', () => {
  it('renders the per-rule families as the front thread does, and falls back and recovers when it dies', async () => {
    const byThread = await scrapeWithThread();
    expect(byThread.thread).toBe('render');
    expect(byThread.text).toMatch(/^service_metrics_render_thread_up 1$/m);
    expect(byThread.text).toContain('service_processor_outcomes_total{rule_id="r3",processor_id="p3",tenant_id="acme",result="decline"} 1\n');
    expect(byThread.text).toMatch(/^service_bandit_weight\{rule_id="r2",processor_id="s2",tenant_id="acme"\} /m);
    // One route to beta's r4: its primary (weight 0.9) or its secondary.
    expect(byThread.text).toMatch(/^service_processor_routed_total\{rule_id="r4",processor_id="(p0|s1)",tenant_id="beta"\} 1$/m);

    // The thread dies. The next rendering cannot wait for its replacement (1 s later): it is
    // done on the front thread. Then a new thread takes over. The same state rendered by the
    // front thread and by the render thread is the same text; the failover's follow-up
    // evaluations may still move the state between renderings (on a busy machine, past several
    // seconds), so the front thread's text must equal the render thread's just before or just
    // after it, and the whole sequence is tried again (up to 5 times) when the state moved on
    // both sides, or when a rendering met the replacement already.
    const ATTEMPTS = 5;
    let before = byThread;
    let fallback: { text: string; thread: 'render' | 'front' } | null = null;
    let after = byThread;
    let kills = 0;
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      before = await until('a settled state', async () => {
        const a = await scrapeWithThread();
        await new Promise((r) => setTimeout(r, 1000));
        const b = await scrapeWithThread();
        return a.thread === 'render' && b.thread === 'render' && perRule(a.text) === perRule(b.text) ? b : null;
      }, 30_000);
      await new Promise((r) => setTimeout(r, 1100)); // so that the next rendering starts at once
      await exitWorkerThread(inspectPort, '/metrics/render-worker.js', 70);
      kills++;
      fallback = await scrapeWithThread();
      after = await until('a rendering on the new thread', async () => {
        const r = await scrapeWithThread();
        return r.thread === 'render' ? r : null;
      });
      if (fallback.thread === 'front' && [perRule(before.text), perRule(after.text)].includes(perRule(fallback.text))) break;
    }
    expect(before.thread).toBe('render');
    expect(fallback!.thread).toBe('front');
    expect(s.output()).toMatch(/"msg":"metrics render thread failed; scrapes are rendered on the front thread until it is back","reason":"exited with code 70"/);
    expect(after.text).toMatch(new RegExp(`^service_metrics_render_thread_failures_total ${kills}$`, 'm'));
    expect(after.text).toMatch(/^service_metrics_render_thread_up 1$/m);
    expect(perRule(fallback!.text).length).toBeGreaterThan(5000);
    expect([perRule(before.text), perRule(after.text)]).toContain(perRule(fallback!.text));
  }, 150_000); // up to 5 attempts of ~10 s each on a busy machine

  it('answers gzip as one member of the same text, which promtool parses', async () => {
    const gz = await gzipScrape();
    const text = gunzipSync(gz).toString('utf8');
    expect(gz.readUInt32LE(gz.length - 4)).toBe(Buffer.byteLength(text)); // one member: its trailer covers the whole text
    expect(text.startsWith('# HELP ')).toBe(true);
    expect(text).toContain(FIRST_FAMILY);
    expect(text.endsWith('\n')).toBe(true);
    const promtool = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    // .ci/run installs promtool (Debian package prometheus); under CI a missing binary fails.
    if (promtool.error === undefined || process.env.CI) {
      expect(promtool.error, 'promtool is not installed (apt-get install -y prometheus)').toBeUndefined();
      // Exit 3 is lint advice about prom-client's own process metrics; 1 would be a text it cannot parse.
      expect(promtool.stderr).not.toMatch(/parsing error/);
      expect([0, 3]).toContain(promtool.status);
    }
  });
});
