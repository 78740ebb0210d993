/**
 * Tier 1 (health-based failover) settings. One frozen default object; a tenant overrides
 * fields through `resolveTier1Config`, which validates once on the front thread (at start or
 * on a config change) so the per-cycle worker math never has to.
 *
 * Error rate throughout is technical errors / all outcomes (issuer declines count in the
 * denominator but never as errors). "Credibly above thr" means the Beta(1 + errors,
 * 1 + non-errors) posterior puts at least the configured confidence of its mass above thr.
 */

import { tierConfigError } from '../tier-config-error.js';
import { COUNT_BUCKET_MS } from '../../shm/layout.js';

/**
 * Consecutive technical failures at which the front thread asks for an early evaluation
 * of the rule (`EngineScheduler.requestRuleEvaluation`). It is also the smallest allowed `runLength`, so the
 * early evaluation the front thread requests can always act on the run it saw.
 * P(run of 10 | 10% errors) = 1e-10 per outcome: steady noise never triggers it.
 */
export const FAST_PATH_RUN = 10;

export interface Tier1Config {
  /** healthy → degraded when the error rate is credibly above this. */
  readonly degradeThreshold: number;
  /** → failed_over when the error rate is credibly above this. */
  readonly failoverThreshold: number;
  /**
   * failed_over → healthy when the error rate of the probe traffic is credibly below this.
   * Far below the failover threshold (hysteresis): a processor that still fails 10% of the
   * time is not handed its traffic back. Tenants whose processors have a higher normal
   * error rate should raise it.
   */
  readonly recoveryThreshold: number;
  /** degraded → healthy when the last 60 s are credibly below this (hysteresis below degradeThreshold). */
  readonly degradedExitThreshold: number;
  /**
   * Posterior mass needed to degrade. Stricter than failover: degraded moves no traffic, it
   * alerts, and a false alert costs more than a few seconds; at 0.99 steady 10% noise
   * degraded a 2 tx/s processor about once per 20 hours in simulation, at 0.999 never.
   */
  readonly degradeConfidence: number;
  /** Posterior mass needed to fail over (the failover threshold is far above noise; speed saves payments). */
  readonly failoverConfidence: number;
  /** Posterior mass needed to return to healthy. */
  readonly recoveryConfidence: number;
  /** Trailing horizons tested for a trip, shortest first: short ones see an outage within seconds, long ones a slow ramp. */
  readonly horizonsMs: readonly number[];
  /**
   * Outcomes a horizon needs before its error rate is tested. The test runs on every
   * horizon every cycle (~1000 tests an hour), so small samples would make rare false trips
   * routine: at n = 25 and 10% errors a 0.99 test fires once per ~600 tests, at n = 50 once
   * per ~5000. A total outage on a quiet rule is still caught by the run length.
   */
  readonly minSamples: number;
  /**
   * The "small clean batch" of slow-start recovery: probe outcomes each step of the probe
   * ladder (probeShare → 5% → 10% → 25%) must collect, with fewer than `probeBurst` technical
   * errors among them, before the probe share moves up a step. At the top step the recovery
   * test (credibly below `recoveryThreshold`, ~58 clean outcomes over the whole ladder) hands
   * the configured weight back.
   */
  readonly minProbeSamples: number;
  /**
   * Technical errors within one ladder step that count as a burst: the processor drops back
   * to the bottom of the ladder and its probes are suspended with the back-off (a failed
   * round). 2 by default: one stray error of a healthy processor does not cost a round, while a
   * processor still down costs two failed payments per round.
   */
  readonly probeBurst: number;
  /**
   * Probe rate floor (outcomes per second): on a quiet rule a 2% share would take minutes to
   * collect one batch (0.04 probes/s at 2 tx/s), so each step's share is at least this rate
   * over the rule's traffic of the last minute (the floor itself capped at 50%, share.ts
   * PROBE_FLOOR_CAP). The failed rounds' suspension stretches to keep the failed probes of
   * such a rule near `probeShare` of its traffic (backoff.ts failedRoundMs).
   */
  readonly minProbeRate: number;
  /** Consecutive technical failures that fail a processor over at once (the front thread's run counter). */
  readonly runLength: number;
  /**
   * Share of traffic a failed_over processor receives as recovery probes at the bottom of the
   * slow-start ladder (0 disables probing, and so recovery).
   */
  readonly probeShare: number;
  /**
   * Probe suspension after a failover; doubles with each further failover in the streak (a
   * processor that flaps, which must also stay clean at the bottom step for 4x the suspension
   * before it climbs: state-machine.ts probationMs). A failed probe round suspends again for
   * the streak's current suspension without growing it (longer only on a quiet rule, to keep
   * its failed probes near `probeShare` of the traffic): a round costs one or two failed
   * payments, and the suspension bounds how long after an outage ends the processor is still
   * ignored.
   */
  readonly probeBackoffBaseMs: number;
  readonly probeBackoffMaxMs: number;
  /** A trip later than this after the previous one starts a fresh back-off streak. */
  readonly backoffResetMs: number;
  /**
   * The watch after a recovery (watch.ts): for this long after a failed_over processor is
   * healthy again (0: no watch), its rule is evaluated after every 1-second bucket, and it
   * also fails over when one of `watchHorizonsMs` (shortest first, each with at least
   * `watchMinSamples` outcomes) is credibly above the degrade threshold, at the failover
   * confidence. Nothing changes for a processor that has not just recovered.
   */
  readonly watchMs: number;
  readonly watchHorizonsMs: readonly number[];
  readonly watchMinSamples: number;
  /**
   * The hold after a recovery (watch.ts onHold): for this long after a failed_over processor
   * is healthy again (0: no hold; it is part of the watch and ends with it at the latest, so
   * the watch's per-bucket evaluations end it on time), it gets `recoveryHoldShare` of its
   * configured share, Tier 1 overriding, and the rest only after. A flapper's first recovery
   * cannot be told from the end of an outage: if it goes down again within the hold, the
   * watch's re-trip costs about half the payments.
   */
  readonly recoveryHoldMs: number;
  readonly recoveryHoldShare: number;
  /** Latency degradation: p95 above `latencyFactor` × the processor's own baseline ... */
  readonly latencyFactor: number;
  /** ... and at least this many ms above it (so 20 ms → 70 ms is not an incident). */
  readonly latencyMinDeltaMs: number;
  /** A latency-degraded processor is healthy again below `latencyExitFactor` × baseline. */
  readonly latencyExitFactor: number;
  /** Trailing horizon of the p95 compared with the baseline. */
  readonly latencyHorizonMs: number;
  /** Latency samples needed in that horizon. */
  readonly latencyMinSamples: number;
  /** Half-life of the EWMA of healthy-period p95 that forms the baseline. */
  readonly baselineHalfLifeMs: number;
  /** Healthy observation time needed before the baseline is trusted. */
  readonly baselineWarmupMs: number;
}

export const DEFAULT_TIER1_CONFIG: Tier1Config = Object.freeze({
  degradeThreshold: 0.15,
  failoverThreshold: 0.3,
  recoveryThreshold: 0.1,
  degradedExitThreshold: 0.1,
  degradeConfidence: 0.999,
  failoverConfidence: 0.99,
  recoveryConfidence: 0.95,
  horizonsMs: Object.freeze([5_000, 15_000, 60_000]),
  minSamples: 50,
  minProbeSamples: 3,
  probeBurst: 2,
  minProbeRate: 1,
  runLength: FAST_PATH_RUN,
  probeShare: 0.02,
  probeBackoffBaseMs: 5_000,
  probeBackoffMaxMs: 320_000,
  backoffResetMs: 600_000,
  watchMs: 60_000,
  watchHorizonsMs: Object.freeze([2_000, 8_000]),
  watchMinSamples: 10,
  recoveryHoldMs: 15_000,
  recoveryHoldShare: 0.5,
  latencyFactor: 3,
  latencyMinDeltaMs: 100,
  latencyExitFactor: 2,
  latencyHorizonMs: 15_000,
  latencyMinSamples: 50,
  baselineHalfLifeMs: 600_000,
  baselineWarmupMs: 60_000,
});

/** Longest horizon the count buckets hold (64 one-second buckets, the current one partial). */
const MAX_COUNT_HORIZON_MS = 63_000;
/** Longest horizon the latency buckets hold (12 five-second buckets). */
const MAX_LATENCY_HORIZON_MS = 60_000;

/** Defaults overlaid with `overrides`, validated. Throws a TierConfigError naming the field. */
export function resolveTier1Config(overrides: Partial<Tier1Config> = {}): Tier1Config {
  const c: Tier1Config = { ...DEFAULT_TIER1_CONFIG, ...overrides };
  const rate = (v: number): boolean => v > 0 && v < 1;
  check('degradeThreshold', rate(c.degradeThreshold));
  check('failoverThreshold', rate(c.failoverThreshold) && c.failoverThreshold >= c.degradeThreshold);
  check('recoveryThreshold', rate(c.recoveryThreshold) && c.recoveryThreshold < c.failoverThreshold);
  check('degradedExitThreshold', rate(c.degradedExitThreshold) && c.degradedExitThreshold <= c.degradeThreshold);
  check('degradeConfidence', c.degradeConfidence >= 0.5 && c.degradeConfidence < 1);
  check('failoverConfidence', c.failoverConfidence >= 0.5 && c.failoverConfidence < 1);
  check('recoveryConfidence', c.recoveryConfidence >= 0.5 && c.recoveryConfidence < 1);
  check('horizonsMs', horizonsOk(c.horizonsMs));
  check('minSamples', Number.isInteger(c.minSamples) && c.minSamples >= 1);
  check('minProbeSamples', Number.isInteger(c.minProbeSamples) && c.minProbeSamples >= 1);
  check('runLength', Number.isInteger(c.runLength) && c.runLength >= FAST_PATH_RUN);
  check('probeShare', c.probeShare >= 0 && c.probeShare <= 0.02);
  check('probeBurst', Number.isInteger(c.probeBurst) && c.probeBurst >= 1 && c.probeBurst <= c.minProbeSamples);
  check('minProbeRate', c.minProbeRate >= 0 && c.minProbeRate <= 100);
  check('probeBackoffBaseMs', c.probeBackoffBaseMs >= 0 && Number.isFinite(c.probeBackoffBaseMs));
  check('probeBackoffMaxMs', c.probeBackoffMaxMs >= c.probeBackoffBaseMs && Number.isFinite(c.probeBackoffMaxMs));
  check('backoffResetMs', c.backoffResetMs >= 0 && Number.isFinite(c.backoffResetMs));
  check('watchMs', c.watchMs >= 0 && Number.isFinite(c.watchMs));
  check('watchHorizonsMs', horizonsOk(c.watchHorizonsMs));
  check('watchMinSamples', Number.isInteger(c.watchMinSamples) && c.watchMinSamples >= 1);
  check('recoveryHoldMs', c.recoveryHoldMs >= 0 && Number.isFinite(c.recoveryHoldMs));
  check('recoveryHoldShare', c.recoveryHoldShare > 0 && c.recoveryHoldShare <= 1);
  check('latencyFactor', c.latencyFactor > 1 && Number.isFinite(c.latencyFactor));
  check('latencyMinDeltaMs', c.latencyMinDeltaMs >= 0 && Number.isFinite(c.latencyMinDeltaMs));
  check('latencyExitFactor', c.latencyExitFactor >= 1 && c.latencyExitFactor <= c.latencyFactor);
  check('latencyHorizonMs', c.latencyHorizonMs >= 5000 && c.latencyHorizonMs <= MAX_LATENCY_HORIZON_MS);
  check('latencyMinSamples', Number.isInteger(c.latencyMinSamples) && c.latencyMinSamples >= 1);
  check('baselineHalfLifeMs', c.baselineHalfLifeMs > 0 && Number.isFinite(c.baselineHalfLifeMs));
  check('baselineWarmupMs', c.baselineWarmupMs >= 0 && Number.isFinite(c.baselineWarmupMs));
  return Object.freeze({ ...c, horizonsMs: Object.freeze([...c.horizonsMs]), watchHorizonsMs: Object.freeze([...c.watchHorizonsMs]) });
}

/** At least one horizon, whole seconds the count buckets hold, ascending. */
function horizonsOk(hs: readonly number[]): boolean {
  return Array.isArray(hs) && hs.length > 0 && hs.every((h, i) => h >= COUNT_BUCKET_MS && h <= MAX_COUNT_HORIZON_MS && (i === 0 || h > hs[i - 1]));
}

function check(field: keyof Tier1Config, ok: boolean): void {
  // `ok` is false for NaN as well, since every comparison with NaN is false.
  if (!ok) throw tierConfigError('tier1', field);
}
