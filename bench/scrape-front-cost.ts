/**
 * `node dist/bench/scrape-front-cost.js [--rules 20000] [--rounds 5]`: what one /metrics/
 * rendering costs the front thread, in-process (no HTTP, so less noisy than route latency on a
 * shared machine): the metrics render thread (steady state, and right after a rule change,
 * when the changed tenant's rule list is sent again) against the front thread's sliced
 * rendering (the fallback while that thread is down), interleaved. Every rule is active at
 * Tier 3 (gauges, failure probability, bandit weight, counters), as in `npm run bench:scrape`.
 * Prints per mode the medians over rounds of: wall time of a rendering, front-thread busy time
 * (event-loop utilisation × wall time) and the longest event-loop delay seen.
 */
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { parseCli } from './lib/cli.js';
import { DIST } from './lib/processes.js';
import { Metrics } from '../src/metrics/registry.js';
import { RenderThread } from '../src/metrics/render-thread.js';
import type { Scrape } from '../src/metrics/scrape-cache.js';
import { ScrapeRenderer } from '../src/metrics/scrape-renderer.js';
import { OUTCOME_RESULTS, PF_BANDIT_WEIGHT, PF_FAILURE_PROB, PF_LAST_EVAL_MS, PF_P95_LATENCY, PF_SAMPLE_COUNT, PF_SUCCESS_RATE, RF_OUTCOMES, RF_ROUTED, RI_WINDOW_PRIMARY, RI_WINDOW_SECONDARY } from '../src/shm/layout.js';
import { processorRowOffset, ruleF64Base, ruleI32Base, ruleSegment } from '../src/shm/slots.js';
import { SharedTables } from '../src/shm/tables.js';
import { TenantRegistry } from '../src/tenants/registry.js';
import { settingsForTier, type Tenant } from '../src/tenants/tenant.js';

interface Cost {
  wall_ms: number;
  front_busy_ms: number;
  max_loop_delay_ms: number;
}

/** One active rule: a window on both processors, evaluated, with traffic. */
function addActiveRule(tables: SharedTables, t: Tenant, i: number): void {
  const slot = tables.allocRule(0.9, false);
  t.addRule({ record: { rule_id: `rule_${i}`, attributes: ['US', 'USD', 'card', `ct${i}`, '*', '*'], primary_id: 'stripe', primary_name: 'Stripe', secondary_id: 'adyen', secondary_name: 'Adyen', primary_weight: 0.9, created_at: '' }, slot, runStartedAt: [0, 0], override: null, cache: null });
  const seg = ruleSegment(tables.ruleSegs, slot);
  seg.ruleI32[ruleI32Base(slot) + RI_WINDOW_PRIMARY] = tables.allocWindow();
  seg.ruleI32[ruleI32Base(slot) + RI_WINDOW_SECONDARY] = tables.allocWindow();
  for (let k = 0; k < 2; k++) {
    const o = processorRowOffset(slot, k);
    const f = seg.procF64;
    f[o + PF_SAMPLE_COUNT] = 10 + (i % 90);
    f[o + PF_SUCCESS_RATE] = 0.9 + (i % 97) / 1000;
    f[o + PF_P95_LATENCY] = 100 + (i % 311) * 1.37;
    f[o + PF_LAST_EVAL_MS] = 1_700_000_000_000;
    f[o + PF_FAILURE_PROB] = ((i * 7919) % 1000) / 1e4;
    f[o + PF_BANDIT_WEIGHT] = k === 0 ? 0.9 - (i % 40) / 100 : 0.1 + (i % 40) / 100;
    seg.ruleF64[ruleF64Base(slot) + RF_ROUTED + k] = 1000 + i;
    for (let r = 0; r < OUTCOME_RESULTS; r++) seg.ruleF64[ruleF64Base(slot) + RF_OUTCOMES + k * OUTCOME_RESULTS + r] = (i + r) % 50;
  }
}

async function measure(render: () => Promise<Scrape>): Promise<Cost> {
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  const elu0 = performance.eventLoopUtilization();
  const t0 = performance.now();
  await render();
  const wall = performance.now() - t0;
  h.disable();
  const elu = performance.eventLoopUtilization(elu0);
  return { wall_ms: wall, front_busy_ms: elu.active, max_loop_delay_ms: h.max / 1e6 };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const r1 = (x: number) => Math.round(x * 10) / 10;

async function main(): Promise<void> {
  const v = parseCli({
    usage: 'node dist/bench/scrape-front-cost.js [--rules N] [--rounds N]',
    summary: 'Front-thread cost of one /metrics/ rendering, in-process: the metrics render thread against the sliced front-thread rendering, interleaved; medians.',
    options: { rules: { type: 'string', default: '20000' }, rounds: { type: 'string', default: '5' } },
    help: { rules: 'active rules (one tenant, Tier 3)', rounds: 'rounds of [thread, thread after a rule change, front]' },
  });
  const rules = Number(v.rules);
  const tables = new SharedTables();
  const tenants = new TenantRegistry(['t0'], settingsForTier(3, false));
  const t = tenants.get('t0');
  for (let i = 0; i < rules; i++) addActiveRule(tables, t, i);
  const thread = new RenderThread({ workerUrl: pathToFileURL(join(DIST, 'src/metrics/render-worker.js')) });
  const metrics = new Metrics();
  const viaThread = new ScrapeRenderer(metrics, tables, tenants, thread);
  const stopped = new RenderThread();
  await stopped.stop(); // never available: every rendering is the front thread's fallback
  const onFront = new ScrapeRenderer(new Metrics(), tables, tenants, stopped);
  await viaThread.render(); // starts the thread, sends the rule list
  const rows: Record<string, Cost[]> = { thread: [], 'thread, rule list changed': [], 'front (sliced)': [] };
  const loads: number[] = [];
  for (let round = 0; round < Number(v.rounds); round++) {
    loads.push(loadavg()[0]);
    rows.thread.push(await measure(() => viaThread.render()));
    addActiveRule(tables, t, rules + round); // the tenant's rule list changes: sent again
    rows['thread, rule list changed'].push(await measure(() => viaThread.render()));
    rows['front (sliced)'].push(await measure(() => onFront.render()));
  }
  await thread.stop();
  const summary = Object.entries(rows).map(([mode, cs]) => ({
    mode,
    'wall ms': r1(median(cs.map((c) => c.wall_ms))),
    'front busy ms': r1(median(cs.map((c) => c.front_busy_ms))),
    'max loop delay ms': r1(median(cs.map((c) => c.max_loop_delay_ms))),
  }));
  console.log(`${rules} active rules, ${v.rounds} rounds, load average ${r1(Math.min(...loads))}-${r1(Math.max(...loads))}`);
  console.table(summary);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
