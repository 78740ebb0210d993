/**
 * The watch after a recovery (Tier1Config.watchMs): for a while after a failed_over
 * processor is healthy again, it is evaluated after every completed 1-second bucket and fails
 * over on less evidence (its last `watchHorizonMs`, from `watchMinSamples` outcomes).
 *
 * Why: the first recovery of a flapping processor cannot be told from the end of a single
 * outage, so it is handed its whole share back and meets its next down period with it. The
 * normal trip tests need ≥ minSamples outcomes per horizon and run on the 5 s cycle (or an
 * early evaluation once the last 5 s hold 30% errors): 3-4 s at 60% errors, ~50 failed
 * payments at 20 tx/s and ~110 at 50 tx/s. On watch the same failover threshold and
 * confidence decide on the last second or two, so the re-trip costs about a second of
 * traffic. A processor that stays up is not tripped by it: its rate must still be credibly
 * above the failover threshold (30%), which 2% errors never are on 10 outcomes and more.
 */
import { ProcessorStatus } from '../../shm/layout.js';
import type { Tier1Config } from './config.js';
import type { ProcState } from './state.js';

/** Whether the processor is on the watch of its last recovery at `nowMs`. */
export function onWatch(st: ProcState, cfg: Tier1Config, nowMs: number): boolean {
  return (
    st.status !== ProcessorStatus.FailedOver &&
    st.recoveredAtMs > 0 &&
    nowMs >= st.recoveredAtMs &&
    nowMs - st.recoveredAtMs < cfg.watchMs
  );
}

/**
 * Whether the processor is in the hold after its last recovery at `nowMs` (the watch's first
 * `recoveryHoldMs`): it then gets `recoveryHoldShare` of its configured share (share.ts).
 *
 * Why: the watch makes a flapper's re-trip cost a second or two of traffic, but at its whole
 * share; a processor that comes back and goes down again within the hold costs half of that.
 * A single outage that ends pays with its last half share arriving `recoveryHoldMs` later
 * (healthy and the first half are not delayed). Only a recovery on probes is held.
 */
export function onHold(st: ProcState, cfg: Tier1Config, nowMs: number): boolean {
  // probeOk: the recovery was earned on probes (their counts stay until the next trip); a
  // manual recovery clears them (manual.ts): the operator's word is not held.
  return onWatch(st, cfg, nowMs) && nowMs - st.recoveredAtMs < cfg.recoveryHoldMs && st.probeOk > 0;
}

/**
 * The outcomes a watch horizon needs before it is tested: `watchMinSamples`, scaled by
 * `recoveryHoldShare` during the hold (at least 1). The hold halves the processor's traffic,
 * so the same horizons collect half the outcomes; asking for half as many keeps the re-trip
 * as fast in seconds (it costs half the payments, not the same payments spread over twice the
 * time). 5 outcomes credibly above 15% at 0.99 means at least 3 technical errors among them.
 */
export function watchMinSamples(st: ProcState, cfg: Tier1Config, nowMs: number): number {
  return onHold(st, cfg, nowMs) ? Math.max(1, Math.round(cfg.watchMinSamples * cfg.recoveryHoldShare)) : cfg.watchMinSamples;
}
