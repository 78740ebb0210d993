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
