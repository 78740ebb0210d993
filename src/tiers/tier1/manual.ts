/**
 * Operator commands applied by the worker at the start of a rule's evaluation, before the
 * state machine steps, with the same effects as the moves Tier 1 makes by itself (events,
 * webhooks, audit trail, probe back-off) and the reason "manual".
 *
 * - Failover: the primary of a two-processor rule, if not failed_over, goes failed_over
 *   (`failover.triggered`). The trigger value is its last published error rate, the threshold
 *   the failover threshold.
 * - Recover: a failed_over processor becomes healthy now (`failover.recovered` for a primary,
 *   which gets its configured weight back at once, without the hold that follows a recovery
 *   on probes, then `processor.healthy`). Outcomes before this moment no longer count
 *   (recoveredAtMs), so the old outage does not trip it again at once; the watch applies.
 */
import { COUNT_BUCKET_MS, ManualCommand, ProcessorStatus } from '../../shm/layout.js';
import type { Tier1Config } from './config.js';
import { registerTrip, Role, type StatusChange } from './state-machine.js';
import type { ProcState } from './state.js';

export const MANUAL_REASON = 'manual';

export function applyManualCommand(
  cmd: ManualCommand,
  st: ProcState,
  role: Role,
  errorRate: number,
  cfg: Tier1Config,
  nowMs: number,
  out: StatusChange[],
): void {
  const observed = Number.isNaN(errorRate) ? 0 : errorRate;
  if (cmd === ManualCommand.Failover && role === Role.Primary && st.status !== ProcessorStatus.FailedOver) {
    out.push({ event: 'failover.triggered', from: st.status, to: ProcessorStatus.FailedOver, reason: MANUAL_REASON, triggerValue: observed, threshold: cfg.failoverThreshold });
    st.status = ProcessorStatus.FailedOver;
    st.statusSinceMs = nowMs;
    registerTrip(st, cfg, nowMs, Math.floor(nowMs / COUNT_BUCKET_MS) - 1);
  } else if (cmd === ManualCommand.Recover && st.status === ProcessorStatus.FailedOver) {
    const trig = { reason: MANUAL_REASON, triggerValue: observed, threshold: cfg.recoveryThreshold };
    if (role === Role.Primary) out.push({ event: 'failover.recovered', from: st.status, to: ProcessorStatus.Healthy, ...trig });
    out.push({ event: 'processor.healthy', from: st.status, to: ProcessorStatus.Healthy, ...trig });
    st.status = ProcessorStatus.Healthy;
    st.statusSinceMs = nowMs;
    st.recoveredAtMs = nowMs;
    // No probe evidence behind the operator's word: the cleared counts keep it out of the
    // hold after a recovery (watch.ts onHold), so it gets its configured weight at once.
    st.probeOk = st.probeTech = 0;
    st.probeStep = st.stepOkBase = st.stepTechBase = 0;
  }
}
