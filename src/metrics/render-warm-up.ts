/**
 * What the metrics render thread renders once when it starts, before its first real scrape:
 * private tables (never the service's) with rules in every state a scrape shows, so that the
 * rendering and compression code is optimised before it runs under load. Why: the thread starts
 * with the service, and without this its first renderings ran unoptimised and V8 compiled them
 * on its helper threads meanwhile; with the service on one core that took the route path's
 * core in runs of up to a scheduler tick (4 ms) during the first scrapes (issue 20; README,
 * Benchmarks). Values are the types real rows hold: fractions, NaN where a tier has no output,
 * counters as doubles.
 */
import {
  PF_BANDIT_WEIGHT,
  PF_ERROR_RATE,
  PF_FAILURE_PROB,
  PF_LAST_EVAL_MS,
  PF_P95_LATENCY,
  PF_SAMPLE_COUNT,
  PF_STATUS,
  PF_SUCCESS_RATE,
  OUTCOME_RESULTS,
  RF_OUTCOMES,
  RF_ROUTED,
  RI_GENERATION,
  RI_WINDOW_PRIMARY,
  RI_WINDOW_SECONDARY,
} from '../shm/layout.js';
import { processorRowOffset, ruleF64Base, ruleI32Base, ruleSegment } from '../shm/slots.js';
import { markRowsInUse } from '../shm/processor-rows.js';
import { SharedTables } from '../shm/tables.js';
import type { RenderRequest, RenderTenantRef } from './render-protocol.js';

/** Rules per synthetic tenant (two tenants: `default`, unlabelled, and one labelled). */
export const WARM_UP_RENDER_RULES = 128;
/** Renderings of the synthetic tables: enough calls for V8 to optimise the loops' callers. */
export const WARM_UP_RENDERINGS = 8;

/**
 * `n` render requests over one set of synthetic tables, as the front thread sends them: the
 * first carries the segments and every tenant's rule columns, the later ones neither.
 * Two tenants' rules with traffic, evaluated, in healthy, degraded and failed-over states; a
 * few idle and self-fallback rules.
 */
export function syntheticRequests(n: number): RenderRequest[] {
  const tables = new SharedTables();
  const tenants: RenderTenantRef[] = [];
  for (const [t, tenantId] of ['default', 'warm-up'].entries()) {
    const slots = new Int32Array(WARM_UP_RENDER_RULES);
    const generations = new Int32Array(WARM_UP_RENDER_RULES);
    const ruleIds: string[] = [];
    const processorIds = Array.from({ length: 7 }, (_, p) => `p${p}`);
    const primary = new Int32Array(WARM_UP_RENDER_RULES);
    const secondary = new Int32Array(WARM_UP_RENDER_RULES);
    for (let r = 0; r < WARM_UP_RENDER_RULES; r++) {
      const self = r % 16 === 15;
      const slot = tables.allocRule(0.9, self);
      const seg = ruleSegment(tables.ruleSegs, slot);
      const ib = ruleI32Base(slot);
      slots[r] = slot;
      generations[r] = seg.ruleI32[ib + RI_GENERATION];
      ruleIds.push(`rule-${t}-${r}`);
      primary[r] = r % 7;
      secondary[r] = self ? r % 7 : (r + 1) % 7;
      if (r % 8 === 7) continue; // no traffic yet: only the prior is shown
      seg.ruleI32[ib + RI_WINDOW_PRIMARY] = 2 * r;
      seg.ruleI32[ib + RI_WINDOW_SECONDARY] = self ? 2 * r : 2 * r + 1;
      const fb = ruleF64Base(slot);
      markRowsInUse(seg, slot); // as an evaluation does before it writes them
      for (let k = 0; k < 2; k++) {
        const o = processorRowOffset(slot, k);
        const f = seg.procF64;
        f[o + PF_STATUS] = r % 5 === 0 && k === 0 ? 2 : r % 3 === 0 ? 1 : 0;
        f[o + PF_SUCCESS_RATE] = 0.5 + (r % 50) / 101;
        f[o + PF_ERROR_RATE] = (r % 20) / 203;
        f[o + PF_P95_LATENCY] = r % 11 === 0 ? NaN : 120.5 + r;
        f[o + PF_SAMPLE_COUNT] = 10 + r;
        f[o + PF_FAILURE_PROB] = (r % 97) / 101;
        f[o + PF_BANDIT_WEIGHT] = k === 0 ? 0.9 - (r % 9) / 10 : 0.1 + (r % 9) / 10;
        f[o + PF_LAST_EVAL_MS] = 1_700_000_000_000 + r;
        seg.ruleF64[fb + RF_ROUTED + k] = 100 + r * 3;
        for (let res = 0; res < OUTCOME_RESULTS; res++) seg.ruleF64[fb + RF_OUTCOMES + k * OUTCOME_RESULTS + res] = res === 0 ? 90 + r : r % 4;
      }
    }
    tenants.push({ tenantId, version: 1, predictionEnabled: t === 0, rules: { tenantId, slots, generations, ruleIds, processorIds, primary, secondary } });
  }
  const front = '# HELP service_warm_up a synthetic rendering\n# TYPE service_warm_up gauge\nservice_warm_up 1\n';
  return Array.from({ length: n }, (_, i) => ({
    type: 'render',
    id: -1 - i,
    front,
    tenants: i === 0 ? tenants : tenants.map(({ rules: _, ...ref }) => ref),
    ...(i === 0 && { segments: [...tables.segments().rules] }),
  }));
}
