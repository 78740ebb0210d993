/**
 * Cluster mode metrics (SERVICE_REDIS_URL): who leads, lease changes, how fresh the decision
 * table is, how far behind other replicas' outcomes arrive, and the Redis work per replica.
 */
import { Counter, Histogram } from 'prom-client';
import type { ClusterEvents, ClusterNode } from '../cluster/cluster-node.js';
import type { Metrics } from './registry.js';

const ROLES = ['leader', 'follower', 'fallback'] as const;

/** Registers the gauges (read at scrape time) and returns the event sinks the node reports to. */
export function clusterMetrics(metrics: Metrics, node: () => ClusterNode): ClusterEvents {
  const registers = [metrics.registry];
  const leaseChanges = new Counter({
    name: 'service_cluster_lease_changes_total',
    help: 'leader lease changes on this replica: acquired or lost',
    labelNames: ['change'],
    registers,
  });
  const batches = new Counter({
    name: 'service_cluster_outcome_batches_total',
    help: 'outcome delta batches: shipped (by this replica), merged (from others), dropped (not shippable while Redis was unreachable, past the backlog bound)',
    labelNames: ['result'],
    registers,
  });
  const shippedBytes = new Counter({ name: 'service_cluster_outcome_bytes_shipped_total', help: 'bytes of outcome deltas shipped to Redis', registers });
  const lag = new Histogram({
    name: 'service_cluster_shipping_lag_seconds',
    help: "age of another replica's outcome batch when merged here (its first outcome to merge)",
    buckets: [0.05, 0.1, 0.2, 0.3, 0.5, 1, 2, 5, 15, 60],
    registers,
  });
  const tables = new Counter({
    name: 'service_cluster_tables_total',
    help: 'decision tables: published (leader), fenced (refused: the lease was no longer ours), publish_failed, applied (follower), rejected_stale (older epoch or version), gap (a delta not based on the version held: the follower fetches the snapshot)',
    labelNames: ['result'],
    registers,
  });
  const commands = new Histogram({
    name: 'service_cluster_forwarded_command_seconds',
    help: 'operator commands (manual failover/recover) forwarded to the leader: on the follower, the time to the answer by result (answered, no_leader, redis_unreachable, no_answer, table_not_applied); on the leader, the time to apply one (served)',
    labelNames: ['result'],
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5, 10],
    registers,
  });
  // Every result is exported from the start (0), so alerts on failures have a series to watch.
  for (const r of ['answered', 'no_leader', 'redis_unreachable', 'no_answer', 'table_not_applied', 'served']) commands.zero({ result: r });
  for (const c of ['acquired', 'lost']) leaseChanges.inc({ change: c }, 0);
  for (const r of ['shipped', 'merged', 'dropped']) batches.inc({ result: r }, 0);
  for (const r of ['published', 'fenced', 'publish_failed', 'applied', 'rejected_stale', 'gap']) tables.inc({ result: r }, 0);

  metrics.gauge('service_cluster_leader', '1 while this replica holds the leader lease', [], (g) => g.set(node().status().leader ? 1 : 0));
  metrics.gauge('service_cluster_role', '1 for this replica\'s current role: leader, follower or fallback (evaluating its own outcomes: no fresh decision table)', ['role'], (g) => {
    const role = node().role();
    for (const r of ROLES) g.set({ role: r }, r === role ? 1 : 0);
  });
  metrics.gauge('service_cluster_fallback', '1 while this replica evaluates its own outcomes because no fresh decision table arrived', [], (g) => g.set(node().role() === 'fallback' ? 1 : 0));
  metrics.gauge('service_cluster_epoch', 'highest leader epoch this replica has seen', [], (g) => g.set(node().status().epoch));
  metrics.gauge('service_cluster_table_age_seconds', "seconds since this replica last knew it held the leader's current decision table (0 on the leader; absent before the first)", [], (g) => {
    const age = node().status().table_age_seconds;
    if (age !== null) g.set(age);
  });
  metrics.gauge('service_cluster_redis_connected', 'Redis connectivity of the command connection, 0 or 1', [], (g) => g.set(node().status().redis_connected ? 1 : 0));
  metrics.gauge('service_cluster_redis_round_trips', 'Redis round trips made by this replica since start (commands, pipelines, scripts, blocking reads)', [], (g) => g.set(node().roundTrips()));
  metrics.gauge('service_cluster_outcome_backlog_bytes', 'outcome deltas waiting to be shipped (Redis unreachable), bytes', [], (g) => g.set(node().shipperStats().backlogBytes));

  return {
    leaseChange: (c) => leaseChanges.inc({ change: c }),
    batchShipped: (n, bytes) => {
      batches.inc({ result: 'shipped' }, n);
      shippedBytes.inc(bytes);
    },
    batchDropped: (n) => batches.inc({ result: 'dropped' }, n),
    batchMerged: (s) => {
      batches.inc({ result: 'merged' });
      lag.observe(s);
    },
    table: (r) => tables.inc({ result: r }),
    command: (r, secs) => commands.observe({ result: r }, secs),
  };
}
