/**
 * Operational metrics an on-call engineer graphs and alerts on: the evaluation cycle
 * (count, skipped and failed shard evaluations, when it last finished) and the webhook
 * backlog. All are read from counters the engine and the dispatcher already keep, at
 * scrape time. The cycle duration histogram is observed by the engine (Metrics).
 */
import type { SchedulerStats } from '../engine/scheduler.js';
import type { Metrics } from './registry.js';
import { registerComputed } from './request-metrics.js';

export interface OperationsSources {
  engineStats(): SchedulerStats;
  webhookBacklog(): number;
}

export function registerOperationsMetrics(metrics: Metrics, src: OperationsSources): void {
  const r = metrics.registry;
  const stat = (pick: (s: SchedulerStats) => number) => () => [{ labels: {}, value: pick(src.engineStats()) }];
  registerComputed(r, 'service_engine_cycles_total', 'evaluation cycles started', 'counter', stat((s) => s.cyclesRun));
  registerComputed(
    r,
    'service_engine_evaluations_skipped_total',
    'tenant evaluations skipped at a cycle because the previous one was still running (the pool is not keeping up)',
    'counter',
    stat((s) => s.overrunsSkipped),
  );
  registerComputed(r, 'service_engine_evaluations_failed_total', 'tenant evaluations that failed in the worker pool', 'counter', stat((s) => s.tasksFailed));
  registerComputed(r, 'service_engine_last_cycle_timestamp_seconds', 'when the last evaluation cycle finished, Unix time in seconds (0 before the first)', 'gauge', () => {
    const end = src.engineStats().lastCycleEndMs;
    return [{ labels: {}, value: Number.isNaN(end) ? 0 : end / 1000 }];
  });
  registerComputed(r, 'service_webhook_deliveries_pending', 'webhook deliveries not yet delivered or failed (queued, in flight or waiting for a retry)', 'gauge', () => [
    { labels: {}, value: src.webhookBacklog() },
  ]);
}
