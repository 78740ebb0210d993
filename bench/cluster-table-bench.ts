/**
 * Decision-table publish cost at 100,000 rules, whole-table (as before: every rule, encoded and
 * applied in one go) against delta-and-snapshot with 2 ms slices (as now), interleaved.
 *
 * In one process, without Redis (its round trip does not block the front thread): the leader's
 * build (read the rules from shared memory, fingerprint, encode) and a follower's apply (decode,
 * write the rows) on a second set of shared tables. Per publish: the longest front-thread pause
 * (the longest slice), the total time, the bytes; and the event-loop delay (p99, max) measured
 * while publishing, the delay any route waiting on that thread would have added. Between
 * publishes, CHANGED rules change their share, as an evaluation that moves a few rules does.
 *
 *   npm run bench:table -- [--rules 100000] [--rounds 6] [--changed 10]
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseCli } from './lib/cli.js';
import { TableBuilder, type BuiltTable } from '../src/cluster/table-builder.js';
import { visitTableSliced } from '../src/cluster/table-apply.js';
import { readTableHeader, TableKind } from '../src/cluster/table-codec.js';
import { applyRuleEntry } from '../src/cluster/table-rows.js';
import { RF_PRIMARY_SHARE, RULE_F64_STRIDE, RULE_MASK } from '../src/shm/layout.js';
import { ruleSegment } from '../src/shm/slots.js';
import { SharedTables } from '../src/shm/tables.js';
import type { LiveRule, Tenant } from '../src/tenants/tenant.js';

const o = parseCli({
  usage: 'npm run bench:table -- [options]',
  summary:
    "Decision-table publish cost for one tenant: whole table without a yield (as before) against delta + snapshot in 2 ms slices (as now), interleaved; prints bytes, the leader's build and a follower's apply (total and longest front-thread pause) and the event-loop delay while publishing.",
  options: {
    rules: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '6' },
    changed: { type: 'string', default: '10' },
  },
  help: {
    rules: 'rules of the tenant',
    rounds: 'interleaved rounds (each: 5 publishes per mode)',
    changed: 'rules whose share changes before each publish',
  },
});
const RULES = Number(o.rules);
const ROUNDS = Number(o.rounds);
const CHANGED = Number(o.changed);
const PUBLISHES = 5;

const leader = new SharedTables();
const follower = new SharedTables();
const rules = new Map<string, LiveRule>();
const keyOfRule = new Map<LiveRule, number>();
const followerSlot = new Map<number, number>();
for (let i = 0; i < RULES; i++) {
  const slot = leader.allocRule(1, false);
  const rule = { slot, record: { rule_id: `r${i}`, primary_id: 'stripe', secondary_id: 'adyen' } } as unknown as LiveRule;
  rules.set(`r${i}`, rule);
  keyOfRule.set(rule, 1_000_000 + i);
  followerSlot.set(1_000_000 + i, follower.allocRule(1, false));
}
const tenant = { id: 'bench', rules } as unknown as Tenant;
const slots = [...rules.values()].map((r) => r.slot);

let seed = 42;
function changeSome(): void {
  for (let j = 0; j < CHANGED; j++) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    const slot = slots[seed % slots.length];
    ruleSegment(leader.ruleSegs, slot).ruleF64[(slot & RULE_MASK) * RULE_F64_STRIDE + RF_PRIMARY_SHARE] = (seed % 1000) / 1000;
  }
}

interface Sample {
  kind: 'snapshot' | 'delta';
  bytes: number;
  buildMs: number;
  buildPauseMs: number;
  applyMs: number;
  applyPauseMs: number;
}

async function publishOnce(b: TableBuilder, sliceMs: number, version: number): Promise<Sample> {
  const t0 = performance.now();
  const built = (await b.build(tenant, 1, version, () => true)) as BuiltTable;
  const buildMs = performance.now() - t0;
  b.published(tenant.id, 1, version);
  const t1 = performance.now();
  const done = await visitTableSliced(readTableHeader(built.table), sliceMs, () => true, (e) => {
    const slot = followerSlot.get(e.key);
    if (slot !== undefined) applyRuleEntry(follower, slot, e);
  });
  return {
    kind: built.kind === TableKind.Snapshot ? 'snapshot' : 'delta',
    bytes: built.table.length,
    buildMs,
    buildPauseMs: b.lastLongestSliceMs,
    applyMs: performance.now() - t1,
    applyPauseMs: done.longestSliceMs,
  };
}

const modes = {
  // As before: every publish a whole table, built and applied without a yield.
  whole: { builder: new TableBuilder(leader, (r) => keyOfRule.get(r), { snapshotMs: 0, sliceMs: Infinity }), sliceMs: Infinity },
  // As now: a snapshot (forced at the start of each block, as the periodic one), then deltas; 2 ms slices.
  delta: { builder: new TableBuilder(leader, (r) => keyOfRule.get(r), { sliceMs: 2 }), sliceMs: 2 },
};
const samples: Record<keyof typeof modes, Sample[]> = { whole: [], delta: [] };
const loopDelay: Record<keyof typeof modes, { p99: number[]; max: number[] }> = { whole: { p99: [], max: [] }, delta: { p99: [], max: [] } };

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.floor(p * s.length))];
}
const med = (xs: number[]) => pct(xs, 0.5);
const f = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));

async function main(): Promise<void> {
  let version = 0;
  for (let round = 0; round < ROUNDS; round++) {
    for (const name of ['whole', 'delta'] as const) {
      const m = modes[name];
      m.builder.forget(tenant.id);
      const h = monitorEventLoopDelay({ resolution: 1 });
      h.enable();
      for (let p = 0; p < PUBLISHES; p++) {
        changeSome();
        samples[name].push(await publishOnce(m.builder, m.sliceMs, ++version));
        await new Promise((r) => setTimeout(r, 20)); // a gap between evaluations
      }
      h.disable();
      loopDelay[name].p99.push(h.percentile(99) / 1e6);
      loopDelay[name].max.push(h.max / 1e6);
    }
  }
  console.log(`decision-table publish at ${RULES.toLocaleString('en')} rules, ${CHANGED} rules changed per publish, ${ROUNDS} interleaved rounds of ${PUBLISHES} publishes per mode`);
  for (const name of ['whole', 'delta'] as const) {
    for (const kind of ['snapshot', 'delta'] as const) {
      const xs = samples[name].filter((s) => s.kind === kind);
      if (xs.length === 0) continue;
      const col = (k: keyof Sample) => {
        const v = xs.map((s) => s[k] as number);
        return `${f(med(v))} (max ${f(Math.max(...v))})`;
      };
      console.log(
        `${name === 'whole' ? 'before (whole table, no yield)' : 'after (delta + snapshot, 2 ms slices)'} — ${kind} ×${xs.length}: ` +
          `bytes ${col('bytes')}; leader build ${col('buildMs')} ms, longest pause ${col('buildPauseMs')} ms; ` +
          `follower apply ${col('applyMs')} ms, longest pause ${col('applyPauseMs')} ms`,
      );
    }
    console.log(`  event-loop delay while publishing: p99 ${f(med(loopDelay[name].p99))} ms (median of rounds), max ${f(Math.max(...loopDelay[name].max))} ms`);
  }
}

void main();
