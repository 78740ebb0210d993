/**
 * /metrics/ under abuse (issue 14, item 4): a scrape storm against 20,000 active rules (an
 * outcome on both processors of each, so that every per-rule family is exported: ~10 MB of
 * text per rendering) leaves another tenant's route latency near its quiet value, because
 * the text is rendered at most once a second, in time slices of ~2 ms with the event loop free
 * between them, and shared; and SERVICE_METRICS_TOKEN makes scrapes need a bearer token. The
 * figures, interleaved against another build, come from `npm run bench:scrape`; this asserts
 * loosely (the suite runs files in parallel on a shared machine).
 */
import { get } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pipelinedPosts } from '../helpers/pipelined-posts.js';
import { makeTempDir, startServer, stopAllServers, type TestServer } from '../helpers/server.js';
import { seedRules } from '../helpers/seed-rules.js';

const TOKEN = 'scrape-token-0123456789abcdef';
let s: TestServer;
let ids: string[];

beforeAll(async () => {
  const dir = makeTempDir('metrics-');
  ids = await seedRules(dir, 'big', 20_000);
  s = await startServer({ dataDir: dir, env: { SERVICE_API_KEYS: 'k-big:big,k-small:small', SERVICE_RATE_LIMIT_RPS: '0', SERVICE_METRICS_TOKEN: TOKEN } });
  await s.request('POST', '/v1/rules', { rule_id: 'small-1', attributes: ['US', 'USD'], primary_id: 'stripe', secondary_id: 'adyen' }, { 'X-API-Key': 'k-small' });
  // Every rule active: an outcome on each of its processors.
  const outcomes = ids.flatMap((rule_id) => ['stripe', 'adyen'].map((processor_id) => ({ rule_id, processor_id, success: true, latency_ms: 120 })));
  const statuses = await pipelinedPosts(s.baseUrl, '/v1/outcome', outcomes, { headers: { 'X-API-Key': 'k-big' } });
  expect(statuses.filter((status) => status !== 202)).toEqual([]);
}, 240_000);
afterAll(stopAllServers);

const auth = { Authorization: `Bearer ${TOKEN}` };

/** `n` routes of the small tenant, one every 10 ms (so that a storm spans several renderings). */
async function routeLatencies(n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    await new Promise((r) => setTimeout(r, 10));
    const t0 = performance.now();
    const r = await s.request('POST', '/v1/route', { country: 'US', currency: 'USD', amount: 5 }, { 'X-API-Key': 'k-small' });
    out.push(performance.now() - t0);
    expect(r.status).toBe(200);
  }
  return out.sort((a, b) => a - b);
}
const p99 = (sorted: number[]) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))];

describe('/metrics/ token', () => {
  it('needs the bearer token when SERVICE_METRICS_TOKEN is set', async () => {
    for (const h of [{}, { Authorization: 'Bearer wrong-token-0123456789' }, { Authorization: TOKEN }]) {
      const r = await s.request('GET', '/metrics/', undefined, h);
      expect(r.status).toBe(401);
      expect(r.json.error.code).toBe('UNAUTHORIZED');
      expect(r.text).not.toContain('service_');
    }
    const ok = await s.request('GET', '/metrics/', undefined, auth);
    expect(ok.status).toBe(200);
    expect(ok.text).toMatch(/^service_processor_failure_probability\{rule_id="rule_19999",processor_id="stripe",tenant_id="big"\} /m);
    // Every rule is active: its health and outcome counters are exported too (the real size).
    expect(ok.text).toMatch(/^service_processor_health_status\{rule_id="rule_19999",processor_id="adyen",tenant_id="big"\} 1$/m);
    expect(ok.text).toMatch(/^service_processor_outcomes_total\{rule_id="rule_0",processor_id="stripe",tenant_id="big",result="success"\} 1$/m);
    expect(ok.text.length).toBeGreaterThan(5_000_000);
  });
});

describe('a scrape storm', () => {
  it('leaves route latency near its quiet value', async () => {
    await routeLatencies(50); // warm-up
    const quiet = p99(await routeLatencies(200));
    let stop = false;
    let scrapes = 0;
    const answered = new Array<number>(10).fill(0); // answers per scraper
    const scraper = async (_: unknown, i: number) => {
      // Raw HTTP, gzip accepted (as Prometheus does) and the bytes discarded: the test process
      // also times the routes, so the scrapers must cost it little.
      while (!stop) {
        await new Promise<void>((resolve, reject) => {
          get(`${s.baseUrl}/metrics/`, { headers: { ...auth, 'Accept-Encoding': 'gzip' } }, (res) => {
            res.resume();
            res.on('end', () => resolve());
          }).on('error', reject);
        });
        scrapes++;
        answered[i]++;
      }
    };
    const scrapers = Array.from({ length: 10 }, scraper);
    await new Promise((r) => setTimeout(r, 300));
    const t0 = Date.now();
    const storm = p99(await routeLatencies(300));
    const seconds = (Date.now() - t0) / 1000;
    // The storm goes on until a second shared rendering has answered the scrapers: about a
    // second on a free machine, but a loaded CI machine has taken longer than the routes above
    // (one rendering, 10 scrapes, in a storm of 5.8 s).
    for (const until = Date.now() + 30_000; scrapes < 20 && Date.now() < until; ) await new Promise((r) => setTimeout(r, 50));
    stop = true;
    await Promise.all(scrapers);
    console.log(`scrape storm: route p99 quiet ${quiet.toFixed(1)} ms, during 10 scrapers ${storm.toFixed(1)} ms; ${scrapes} scrapes in ${((Date.now() - t0) / 1000).toFixed(1)} s (routes: ${seconds.toFixed(1)} s)`);
    expect(scrapes).toBeGreaterThanOrEqual(20); // renderings keep coming: about one a second, shared
    expect(Math.min(...answered)).toBeGreaterThanOrEqual(1); // and every scraper got answers
    // Loose (the suite runs files in parallel on a shared machine; the bound, 2× the
    // quiet p99, is checked by bench:scrape): unbounded, ten scrapers made a route wait ~1.6 s
    // here (each rendering held the loop ~0.16 s in one piece).
    expect(storm).toBeLessThan(Math.max(4 * quiet, quiet + 250));
  });
});
