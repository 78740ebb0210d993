/**
 * Store and process health, read at scrape time: whether writes go through (a full disk
 * makes them fail with 507 while routing continues), refused writes by cause, records set
 * aside at start, and errors nothing caught (see process-guard.ts).
 */
import { unhandledCounts } from '../process-guard.js';
import type { Store } from '../store/store.js';
import type { Metrics } from './registry.js';
import { registerComputed } from './request-metrics.js';

export function registerStoreGauges(metrics: Metrics, store: Store): void {
  const r = metrics.registry;
  registerComputed(r, 'service_store_writable', 'whether the last store write committed, 0 or 1 (0 while the disk is full)', 'gauge', () => [
    { labels: {}, value: store.status().writable ? 1 : 0 },
  ]);
  registerComputed(r, 'service_store_full', 'whether the store refuses writes for lack of space, 0 or 1', 'gauge', () => [
    { labels: {}, value: store.status().full ? 1 : 0 },
  ]);
  registerComputed(r, 'service_store_failed_writes_total', 'store writes refused, by cause (full: no space; error: anything else)', 'counter', () => {
    const f = store.status().failedWrites;
    return [
      { labels: { cause: 'full' }, value: f.full },
      { labels: { cause: 'error' }, value: f.error },
    ];
  });
  registerComputed(r, 'service_store_quarantined_records', 'records that could not be decoded at start and were set aside', 'gauge', () => [
    { labels: {}, value: store.status().quarantined },
  ]);
  if (store.status().feed !== undefined) {
    registerComputed(r, 'service_store_listening', 'cluster mode: whether the change listener is connected, 0 or 1 (the 2 s poll covers a gap)', 'gauge', () => [
      { labels: {}, value: store.status().feed?.listening ? 1 : 0 },
    ]);
    registerComputed(r, 'service_store_remote_changes_total', 'cluster mode: changes made by other replicas applied here', 'counter', () => [
      { labels: {}, value: store.status().feed?.remoteChangesApplied ?? 0 },
    ]);
  }
  registerComputed(r, 'service_unhandled_errors_total', 'errors nothing caught, logged and survived (kind: rejection or exception)', 'counter', () => [
    { labels: { kind: 'rejection' }, value: unhandledCounts.rejections },
    { labels: { kind: 'exception' }, value: unhandledCounts.exceptions },
  ]);
}
