/**
 * What the state machine needs to know about one processor, read from its outcome window:
 * error counts over each trip horizon, the outcomes added since the probe phase was last
 * credited, and the recent p95. Kept apart from the machine so the machine stays pure.
 */
import { COUNT_BUCKET_MS, type WindowSegmentViews } from '../../shm/layout.js';
import {
  emptyCounts,
  newLatencySnapshot,
  percentile,
  readCounts,
  readLatency,
} from '../../shm/window.js';
import type { Tier1Config } from './config.js';
import type { ProcState } from './state.js';
import { onWatch } from './watch.js';

export interface HorizonCounts {
  horizonMs: number;
  /** All outcomes (successes, declines, technical errors). */
  n: number;
  errors: number;
}

export interface Signals {
  /** One entry per configured horizon, shortest first. */
  horizons: HorizonCounts[];
  /**
   * One entry per watch horizon (Tier1Config.watchHorizonsMs), shortest first, each cut at the
   * last recovery; n = 0 when the processor is not on the watch after a recovery (watch.ts).
   */
  watch: HorizonCounts[];
  /** The front thread's consecutive technical failure count. */
  run: number;
  /** Outcomes in whole 1-second buckets after the state's probeEpoch, up to `completedEpoch`. */
  newOk: number;
  newTech: number;
  /** Last whole (no longer written) bucket epoch. */
  completedEpoch: number;
  /** p95 over the latency horizon, NaN below the configured minimum of samples. */
  p95Recent: number;
  p95RecentCount: number;
  /**
   * The rule's outcomes per second over the last minute (both processors; 0 = unknown),
   * set by the stage: a failed probe round's cost is weighed against it.
   */
  ruleRate: number;
}

export function newSignals(): Signals {
  return { horizons: [], watch: [], run: 0, newOk: 0, newTech: 0, completedEpoch: 0, p95Recent: NaN, p95RecentCount: 0, ruleRate: 0 };
}

const counts = emptyCounts();
const latency = newLatencySnapshot();

/**
 * Fills `out` from the window. `seg` is undefined while the processor has no window.
 * Horizons never reach back past the processor's last recovery: those outcomes belong to
 * the outage that recovery has just judged over.
 */
export function readSignals(
  seg: WindowSegmentViews | undefined,
  w: number,
  nowMs: number,
  st: ProcState,
  run: number,
  cfg: Tier1Config,
  out: Signals,
): Signals {
  out.run = run;
  out.completedEpoch = Math.floor(nowMs / COUNT_BUCKET_MS) - 1;
  out.newOk = out.newTech = 0;
  out.p95Recent = NaN;
  out.p95RecentCount = 0;
  readHorizons(seg, w, nowMs, st, cfg.horizonsMs, true, out.horizons);
  readHorizons(seg, w, nowMs, st, cfg.watchHorizonsMs, onWatch(st, cfg, nowMs), out.watch);
  if (seg === undefined) return out;

  const fresh = out.completedEpoch - st.probeEpoch;
  if (fresh > 0) {
    // Buckets probeEpoch+1 .. completedEpoch; readCounts skips any already overwritten.
    readCounts(seg, w, out.completedEpoch * COUNT_BUCKET_MS, fresh * COUNT_BUCKET_MS, counts);
    out.newOk = counts.success + counts.decline;
    out.newTech = counts.tech;
  }

  readLatency(seg, w, nowMs, cfg.latencyHorizonMs, latency);
  out.p95RecentCount = latency.count;
  if (latency.count >= cfg.latencyMinSamples) out.p95Recent = percentile(latency, 0.95);
  return out;
}

/** Counts over each of `hs` (never reaching back past the last recovery); all 0 unless `read`. */
function readHorizons(
  seg: WindowSegmentViews | undefined,
  w: number,
  nowMs: number,
  st: ProcState,
  hs: readonly number[],
  read: boolean,
  out: HorizonCounts[],
): void {
  while (out.length < hs.length) out.push({ horizonMs: 0, n: 0, errors: 0 });
  out.length = hs.length;
  for (let i = 0; i < hs.length; i++) {
    const h = out[i];
    h.horizonMs = Math.max(COUNT_BUCKET_MS, Math.min(hs[i], nowMs - st.recoveredAtMs));
    h.n = h.errors = 0;
    if (seg === undefined || !read) continue;
    readCounts(seg, w, nowMs, h.horizonMs, counts);
    h.n = counts.success + counts.decline + counts.tech;
    h.errors = counts.tech;
  }
}
