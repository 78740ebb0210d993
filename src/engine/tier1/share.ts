/**
 * Tier 1's primary share (the probability that a route picks the primary) from the two
 * processors' states. Tier 1 "overrides" when a processor is failed_over, while traffic is
 * shifting back after a recovery, and for a self-fallback rule; later tiers may only adjust
 * the share when it does not.
 *
 * - primary failed_over: the primary gets its probes (probeShare, 0 while suspended);
 * - secondary failed_over: the primary gets everything but the secondary's probes;
 * - both failed_over: the one with the lower error rate over the last minute (posterior
 *   mean, so a processor with few samples is not judged perfect) gets everything but the
 *   other's probes; a tie goes to the secondary, since the primary failed first;
 * - after a primary's recovery: rampStartShare growing linearly to the configured weight
 *   over rampMs (a re-trip aborts it, see the state machine).
 */
import { ProcessorStatus } from '../../shared/layout.js';
import type { Tier1Config } from './config.js';
import type { ProcHealth } from './health.js';
import type { ProcState } from './state.js';

function probe(st: ProcState, cfg: Tier1Config, nowMs: number): number {
  return nowMs >= st.probeResumeMs ? cfg.probeShare : 0;
}

function ramping(p: ProcState, cfg: Tier1Config, nowMs: number): boolean {
  return p.rampStartMs > 0 && nowMs - p.rampStartMs < cfg.rampMs;
}

export function tier1Overrides(p: ProcState, s: ProcState, sameProcessor: boolean, cfg: Tier1Config, nowMs: number): boolean {
  return (
    sameProcessor ||
    p.status === ProcessorStatus.FailedOver ||
    s.status === ProcessorStatus.FailedOver ||
    ramping(p, cfg, nowMs)
  );
}

export function tier1Share(
  p: ProcState,
  s: ProcState,
  hp: ProcHealth,
  hs: ProcHealth,
  configWeight: number,
  sameProcessor: boolean,
  cfg: Tier1Config,
  nowMs: number,
): number {
  if (sameProcessor) return 1;
  const pDown = p.status === ProcessorStatus.FailedOver;
  const sDown = s.status === ProcessorStatus.FailedOver;
  if (pDown && sDown) {
    return errorMean(hp) < errorMean(hs) ? 1 - probe(s, cfg, nowMs) : probe(p, cfg, nowMs);
  }
  if (pDown) return probe(p, cfg, nowMs);
  if (sDown) return 1 - probe(s, cfg, nowMs);
  if (ramping(p, cfg, nowMs)) {
    const from = Math.min(cfg.rampStartShare, configWeight);
    return from + ((configWeight - from) * (nowMs - p.rampStartMs)) / cfg.rampMs;
  }
  return configWeight;
}

function errorMean(h: ProcHealth): number {
  return (h.techErrors + 1) / (h.sampleCount + 2);
}
