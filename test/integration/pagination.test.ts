/**
 * Pages of large lists (issue 14, item 3): 25,000 rules walked through GET /v1/rules and
 * GET /v1/health with `limit`/`after` and `Link: rel="next"` — no duplicate, none missing,
 * in rule_id order; bad parameters are a 422 naming them; slow readers of large pages cost
 * little memory and do not stall another tenant's routing (back-pressure).
 */
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir, startServer, stopAllServers, type TestServer } from '../helpers/server.js';
import { seedRules } from '../helpers/seed-rules.js';

const RULES = 25_000;
const KEYS = 'k-acme:acme,k-other:other';
let s: TestServer;
let seeded: string[] = [];
// Ids of different lengths and characters, so order is by bytes, not by number.
const idOf = (i: number) => (i % 7 === 0 ? `r-${i}` : i % 7 === 1 ? `R.${i}:x` : `rule_${String(i).padStart(6, '0')}`);

async function walk(first: string, key: string): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let next: string | null = first;
  let pages = 0;
  while (next) {
    const r = await s.request('GET', next, undefined, { 'X-API-Key': key });
    expect(r.status).toBe(200);
    pages++;
    const json = r.json;
    ids.push(...(Array.isArray(json) ? json.map((x: { rule_id: string }) => x.rule_id) : Object.keys(json.rules)));
    const link = r.headers.get('link');
    next = link ? /^<([^>]+)>; rel="next"$/.exec(link)![1] : null;
  }
  return { ids, pages };
}

beforeAll(async () => {
  const dir = makeTempDir('pagination-');
  seeded = await seedRules(dir, 'acme', RULES, idOf);
  s = await startServer({ dataDir: dir, env: { SERVICE_API_KEYS: KEYS, SERVICE_RATE_LIMIT_RPS: '0' } });
  await s.request('POST', '/v1/rules', { rule_id: 'other-1', attributes: ['US', 'USD'], primary_id: 'stripe', secondary_id: 'adyen' }, { 'X-API-Key': 'k-other' });
}, 120_000);
afterAll(stopAllServers);

describe('pagination', () => {
  it('walks 25,000 rules in pages of 10,000 with no duplicate and none missing, in id order', async () => {
    const { ids, pages } = await walk('/v1/rules?limit=10000', 'k-acme');
    expect(pages).toBe(3);
    expect(ids).toEqual(seeded);
  });

  it('defaults to pages of 1,000 with a Link to the next', async () => {
    const r = await s.request('GET', '/v1/rules', undefined, { 'X-API-Key': 'k-acme' });
    expect(r.json).toHaveLength(1000);
    expect(r.headers.get('link')).toBe(`</v1/rules?limit=1000&after=${encodeURIComponent(seeded[999])}>; rel="next"`);
    const last = await s.request('GET', `/v1/rules?after=${encodeURIComponent(seeded[RULES - 2])}`, undefined, { 'X-API-Key': 'k-acme' });
    expect(last.json.map((x: { rule_id: string }) => x.rule_id)).toEqual([seeded[RULES - 1]]);
    expect(last.headers.get('link')).toBeNull();
    // Another tenant sees only its own rule.
    const other = await s.request('GET', '/v1/rules', undefined, { 'X-API-Key': 'k-other' });
    expect(other.json.map((x: { rule_id: string }) => x.rule_id)).toEqual(['other-1']);
  });

  it('walks the health of 25,000 rules, keeping the `rules` object shape', async () => {
    const first = await s.request('GET', '/v1/health?limit=3', undefined, { 'X-API-Key': 'k-acme' });
    expect(first.json).toMatchObject({ status: 'ok', engine_running: true, tier: expect.any(Number) });
    expect(Object.keys(first.json.rules)).toEqual(seeded.slice(0, 3));
    expect(first.json.rules[seeded[0]].primary.processor_id).toBe('stripe');
    const { ids, pages } = await walk('/v1/health?limit=7000', 'k-acme');
    expect(pages).toBe(4);
    expect(ids).toEqual(seeded);
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=10001', 'limit'],
    ['limit=abc', 'limit'],
    ['after=%20bad%20id', 'after'],
  ])('rejects %s with a 422 naming the field', async (q, field) => {
    for (const path of ['/v1/rules', '/v1/health']) {
      const r = await s.request('GET', `${path}?${q}`, undefined, { 'X-API-Key': 'k-acme' });
      expect(r.status).toBe(422);
      expect(r.json.error.fields[0].field).toBe(field);
    }
  });

  it('slow readers of large pages hold little memory and do not stall routing', async () => {
    const rss = async () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${s.proc.pid}/status`, 'utf8'))![1]) * 1024;
    const before = await rss();
    // Eight clients ask for 10,000 rules' health (~6 MB each) and never read the answer.
    const sockets: Socket[] = [];
    for (let i = 0; i < 8; i++) {
      const sock = connect(s.port, '127.0.0.1');
      sock.pause();
      sock.write(`GET /v1/health?limit=10000 HTTP/1.1\r\nHost: x\r\nX-API-Key: k-acme\r\n\r\n`);
      sockets.push(sock);
    }
    await new Promise((r) => setTimeout(r, 500));
    const times: number[] = [];
    for (let i = 0; i < 40; i++) {
      const t0 = performance.now();
      const r = await s.request('POST', '/v1/route', { country: 'US', currency: 'USD', amount: 5 }, { 'X-API-Key': 'k-other' });
      times.push(performance.now() - t0);
      expect(r.status).toBe(200);
    }
    times.sort((a, b) => a - b);
    const grown = (await rss()) - before;
    console.log(`slow readers: RSS +${(grown / 1048576).toFixed(1)} MB; route p50 ${times[20].toFixed(1)} ms, max ${times[39].toFixed(1)} ms`);
    for (const sock of sockets) sock.destroy();
    // Unbounded, 8 × 6 MB bodies plus their string building would be ~100 MB here.
    expect(grown).toBeLessThan(40 * 1024 * 1024);
    expect(times[times.length - 2]).toBeLessThan(500);
  });
});
