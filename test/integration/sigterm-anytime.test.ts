/**
 * A stop signal at any moment ends the service with exit code 0, never by the signal: during
 * its start-up (the data directory locked, the store being checked and loaded), with the whole
 * process group signalled while the store check runs in its child process (Ctrl-C, systemd,
 * `kill -- -<pgid>`: not taken for a damaged store, which SERVICE_STORE_START_FRESH would move
 * aside), and under routing, outcome, rule-creation, scrape and webhook load with checkpoints
 * every 200 ms, after which every acknowledged write is there on restart.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnServer, startServer, stopAllServers, type SpawnedServer, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/until.js';

const receivers: Server[] = [];
afterAll(async () => {
  for (const r of receivers) r.closeAllConnections();
  await stopAllServers();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const rule = (i: number) => ({ rule_id: `r${i}`, attributes: [['US', 'GB', 'FR', 'DE', 'JP'][i % 5], ['USD', 'EUR'][Math.floor(i / 5) % 2], 'card'], primary_id: 'stripe', secondary_id: 'adyen' });

/** Resolves with the exit code and signal of a spawned server. */
function exitOf(s: SpawnedServer): Promise<{ code: number | null; signal: string | null }> {
  if (s.proc.exitCode !== null || s.proc.signalCode !== null) return Promise.resolve({ code: s.proc.exitCode, signal: s.proc.signalCode });
  return new Promise((r) => s.proc.once('exit', (code, signal) => r({ code, signal })));
}

/** Polls (every 2 ms) until `check` holds; fails if the server exits first. */
async function whileStarting(s: SpawnedServer, what: string, check: () => boolean): Promise<void> {
  const end = Date.now() + 60_000;
  while (!check()) {
    if (s.proc.exitCode !== null || s.proc.signalCode !== null) throw new Error(`server exited before ${what}; output:\n${s.output()}`);
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(2);
  }
}

/** A data directory holding a store with rules r0..r{n-1} (so the start-up checks and loads it). */
async function storeWithRules(n: number): Promise<string> {
  const s = await startServer();
  for (let i = 0; i < n; i++) expect((await s.request('POST', '/v1/rules', rule(i))).status).toBe(201);
  expect(await s.stop()).toBe(0);
  return s.dataDir;
}

async function ruleIds(s: TestServer): Promise<Set<string>> {
  return new Set(((await s.request('GET', '/v1/rules?limit=1000')).json as { rule_id: string }[]).map((r) => r.rule_id));
}

describe('SIGTERM during start-up', () => {
  it('stops the service once it is up: exit 0, the lock released, the store intact', async () => {
    const dataDir = await storeWithRules(3);
    // The lock is taken first thing in start-up; the store check and load follow.
    for (const delayMs of [0, 10, 40, 120]) {
      const s = await spawnServer({ dataDir, env: { SERVICE_LOG_LEVEL: 'info' } });
      await whileStarting(s, 'the data directory lock', () => existsSync(join(dataDir, 'service.lock')));
      await sleep(delayMs);
      s.proc.kill('SIGTERM');
      const e = await exitOf(s);
      expect({ delayMs, ...e }, s.output()).toEqual({ delayMs, code: 0, signal: null });
      expect(s.output()).toMatch(/"msg":"service stopped"/);
      expect(existsSync(join(dataDir, 'service.lock'))).toBe(false);
    }
    const after = await startServer({ dataDir });
    expect(await ruleIds(after)).toEqual(new Set(['r0', 'r1', 'r2']));
    expect(await after.stop()).toBe(0);
  });

  it.skipIf(process.platform !== 'linux')('a SIGTERM to the whole process group during the store check is not taken for damage', async () => {
    const dataDir = await storeWithRules(3);
    // START_FRESH: a store wrongly found damaged would be moved aside and the service come up empty.
    const s = await spawnServer({ dataDir, ownProcessGroup: true, env: { SERVICE_LOG_LEVEL: 'info', SERVICE_STORE_START_FRESH: 'true' } });
    const pid = s.proc.pid!;
    const probeRunning = () => {
      let children: string[] = [];
      try {
        children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
      } catch {
        return false;
      }
      return children.some((c) => {
        try {
          return readFileSync(`/proc/${c}/cmdline`, 'utf8').includes('store-probe');
        } catch {
          return false;
        }
      });
    };
    await whileStarting(s, 'the store check process', probeRunning);
    process.kill(-pid, 'SIGTERM');
    const e = await exitOf(s);
    expect(e, s.output()).toEqual({ code: 0, signal: null });
    expect(s.output()).not.toMatch(/damaged|moved aside/);
    expect(readdirSync(dataDir).filter((f) => /damaged|start-fresh/.test(f))).toEqual([]);
    const after = await startServer({ dataDir });
    expect(await ruleIds(after)).toEqual(new Set(['r0', 'r1', 'r2']));
    expect(await after.stop()).toBe(0);
  });
});

describe('SIGTERM under load', () => {
  it('exits 0 and keeps every acknowledged outcome, route and rule, with scrapes and webhook deliveries under way', async () => {
    // A webhook receiver that answers slowly: deliveries are in flight when the signal lands.
    let delivered = 0;
    let active = 0;
    const receiver = createServer((req, res) => {
      delivered++;
      active++;
      req.resume();
      req.on('end', () =>
        setTimeout(() => {
          active--;
          res.writeHead(200).end();
        }, 3000),
      );
    });
    receivers.push(receiver);
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const hookUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
    const env = { SERVICE_EVAL_INTERVAL_MS: '200', SERVICE_WEBHOOK_ALLOW_PRIVATE: 'true', SERVICE_RATE_LIMIT_RPS: '0' };

    const inFlightAtStop: number[] = [];
    for (const loadMs of [300, 900, 1500]) {
      const s = await startServer({ env });
      for (let i = 0; i < 10; i++) expect((await s.request('POST', '/v1/rules', rule(i))).status).toBe(201);
      expect((await s.request('POST', '/v1/webhooks', { url: hookUrl })).status).toBe(201);
      // A run of technical failures fails r0 over: its webhook delivery is under way before the load starts.
      const deliveredBefore = delivered;
      for (let n = 0; n < 12; n++) expect((await s.request('POST', '/v1/outcome', { rule_id: 'r0', processor_id: 'stripe', success: false, latency_ms: 40, error_code: 'timeout' })).status).toBe(202);
      await until('a webhook delivery', () => delivered > deliveredBefore);

      const acked = { outcomes: 0, routes: 0, rules: [] as string[] };
      const unanswered = { outcomes: 0, routes: 0 };
      let done = false;
      const prefailed = 12;
      const post = async (path: string, body: unknown) => {
        const r = await fetch(s.baseUrl + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(15_000) });
        await r.arrayBuffer();
        return r.status;
      };
      const client = async (k: number) => {
        for (let n = 0; !done; n++) {
          const i = (n + k) % 10;
          // Rules r0-r4 see technical failures on their primary (failovers: webhook events).
          const fail = i < 5;
          try {
            if ((await post('/v1/outcome', { rule_id: `r${i}`, processor_id: 'stripe', success: !fail, latency_ms: 40, error_code: fail ? 'timeout' : null })) === 202) acked.outcomes++;
          } catch {
            unanswered.outcomes++;
          }
          try {
            if ((await post('/v1/route', { country: 'US', currency: 'USD', payment_method: 'card' })) === 200) acked.routes++;
          } catch {
            unanswered.routes++;
          }
          if (n % 10 === 0) {
            const id = `load_${k}_${n}`;
            try {
              if ((await post('/v1/rules', { rule_id: id, attributes: ['CA', 'CAD', 'card', id], primary_id: 'a', secondary_id: 'b' })) === 201) acked.rules.push(id);
            } catch {
              /* not acknowledged */
            }
          }
        }
      };
      const scraper = async () => {
        while (!done) {
          try {
            await (await fetch(`${s.baseUrl}/metrics`, { headers: { 'accept-encoding': 'gzip' }, signal: AbortSignal.timeout(15_000) })).arrayBuffer();
          } catch {
            await sleep(10);
          }
        }
      };
      const load = [client(0), client(3), client(6), scraper()];
      await sleep(loadMs);
      const t0 = Date.now();
      inFlightAtStop.push(active);
      const code = await s.stop();
      const stopMs = Date.now() - t0;
      done = true;
      await Promise.all(load);
      expect({ loadMs, code }, s.output()).toEqual({ loadMs, code: 0 });
      expect(acked.outcomes).toBeGreaterThan(0);

      const after = await startServer({ dataDir: s.dataDir, env });
      const st = (await after.request('GET', '/v1/stats')).json;
      // Every acknowledged one is counted; one whose answer was lost to the closing connection may be too.
      expect(st.transactions_reported).toBeGreaterThanOrEqual(prefailed + acked.outcomes);
      expect(st.transactions_reported).toBeLessThanOrEqual(prefailed + acked.outcomes + unanswered.outcomes);
      expect(st.transactions_routed).toBeGreaterThanOrEqual(acked.routes);
      expect(st.transactions_routed).toBeLessThanOrEqual(acked.routes + unanswered.routes);
      const ids = await ruleIds(after);
      for (const id of acked.rules) expect(ids.has(id), id).toBe(true);
      console.log(`SIGTERM after ${loadMs} ms of load: stopped in ${stopMs} ms; ${acked.outcomes} outcomes, ${acked.routes} routes, ${acked.rules.length} rules acknowledged, all there after restart; ${inFlightAtStop.at(-1)} webhook deliveries were in flight`);
      expect(await after.stop()).toBe(0);
    }
    // The stops above were made with deliveries under way (each is held 3 s by the receiver).
    expect(Math.max(...inFlightAtStop)).toBeGreaterThan(0);
  }, 120_000);
});
