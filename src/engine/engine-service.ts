/**
 * The engine on the front thread: schedules evaluations on the worker pool, turns the
 * transitions the workers return into the audit trail, counters, metrics and webhook
 * events, checkpoints engine state to the store, and restores it at start.
 *
 *   outcome ──(run = FAST_PATH_RUN)──► requestRuleEvaluation(tenant, the rule's slot)
 *   timer / early ──► piscina evaluate(shard) ──► transitions ──► audit log, counters, webhooks
 *                                             └─► onEvaluated ──► checkpoint (LMDB)
 */
import type { EngineFacade } from './facade.js';
import { log } from '../log.js';
import type { Metrics } from '../metrics/registry.js';
import type { RuleLifecycle } from '../rules/rule-service.js';
import {
  DecisionSource,
  ManualCommand,
  RI_COMMAND,
  RI_RUN_PRIMARY,
  RI_RUN_SECONDARY,
  RI_DECISION_SOURCE,
} from '../shm/layout.js';
import type { SharedTables } from '../shm/tables.js';
import type { Collection, Log, Store } from '../store/store.js';
import type { TenantRegistry } from '../tenants/registry.js';
import type { LiveRule, Tenant } from '../tenants/tenant.js';
import type { RecordedOutcome } from '../routing/outcome.js';
import { checkpointValues, restoreRule, snapshotRule, storedCheckpoint, type StoredCheckpoint } from './checkpoint.js';
import { CheckpointWriter } from './checkpoint-writer.js';
import { EventRetention } from '../store/retention.js';
import { eventData, failoverEventOf, type FailoverEventRecord } from './events.js';
import type { TenantEngineConfig } from './protocol.js';
import { EngineScheduler, type ShardSpec } from './scheduler.js';
import { wantsEarlyEvaluation } from './early-evaluation.js';
import { engineConfigFor } from './tenant-engine-config.js';
import type { Transition, TransitionEvent } from './transitions.js';
import type { FailoverEventData, ProcessorEventData } from '../webhooks/events.js';
import type { ClusterNode, ClusterRole } from '../cluster/cluster-node.js';
import { ruleI32Base, ruleSegment } from '../shm/slots.js';

/** Failed audit appends kept for retry while the store refuses writes. */
export const MAX_UNSAVED_EVENTS = 10_000;

export type EventPublisher = (tenantId: string, eventType: TransitionEvent, data: FailoverEventData | ProcessorEventData, atMs: number) => void;

export interface CounterCheckpoint {
  routed: number;
  reported: number;
  /** Also kept here because retention prunes the audit trail (absent in older checkpoints). */
  failovers?: number;
}

export interface EngineServiceOptions {
  tables: SharedTables;
  tenants: TenantRegistry;
  store: Store;
  metrics: Metrics;
  intervalMs: number;
  /** The pool threads warm their JIT at start (SERVICE_JIT_WARM_UP). Default false. */
  warmUp?: boolean;
  /** Tests may point at another compiled worker. */
  workerFile?: string | URL;
  /**
   * Cluster mode (SERVICE_REDIS_URL): outcomes are shared with the other replicas; only the
   * leader (or a replica in fallback) evaluates, records transitions and emits webhooks.
   */
  cluster?: ClusterNode;
}

export class EngineService implements EngineFacade, RuleLifecycle {
  readonly events: Log<FailoverEventRecord>;
  private readonly checkpoints: Collection<StoredCheckpoint>;
  private readonly counters: Collection<CounterCheckpoint>;
  private readonly retention: EventRetention;
  private readonly scheduler: EngineScheduler;
  private readonly checkpointer: CheckpointWriter;
  /**
   * Live rule of each occupied slot, to name the rule of a transition. Indexed by slot (slots
   * are dense, reused after a free): 8 bytes a slot, where a Map cost ~35 (3.5 MB at 100,000 rules).
   */
  private readonly bySlot: (LiveRule | undefined)[] = [];
  private readonly configs = new Map<string, TenantEngineConfig>();
  private publish: EventPublisher = () => {};
  private started = false;
  /** When start() ran, epoch ms (readiness: the reference before the first cycle). */
  startedAtMs = NaN;
  private stopped = false;
  private pendingWrites = new Set<Promise<unknown>>();
  /** Audit events whose append failed (store full): retried at every checkpoint, oldest dropped past the cap. */
  private unsavedEvents: { tenantId: string; atMs: number; ev: FailoverEventRecord }[] = [];
  /** Engine writes refused since the store last took one (logged once per episode, not per write). */
  private failedWrites = 0;
  /** Operator commands waiting for the evaluation that takes them, per tenant. */
  private readonly commandWaiters = new Map<string, { rule: LiveRule; done: () => void }[]>();

  /** Transitions a replica computed while it no longer led (its task outlived the lease): dropped, the leader has them. */
  droppedTransitions = 0;

  constructor(private readonly o: EngineServiceOptions) {
    this.events = o.store.log<FailoverEventRecord>('failover_events');
    // Each replica checkpoints its own engine state, read back at its next start: stored, not announced.
    this.checkpoints = o.store.collection<StoredCheckpoint>('engine_state', { announce: false, bytes: true });
    this.counters = o.store.collection<CounterCheckpoint>('tenant_counters', { announce: false });
    this.retention = new EventRetention(this.events);
    // Half an interval: every cycle still checkpoints (a tick may come a little early), early
    // evaluations in between do not.
    this.checkpointer = new CheckpointWriter({
      tables: o.tables,
      checkpoints: this.checkpoints,
      track: (p) => this.track(p),
      minGapMs: o.intervalMs / 2,
      whenIdle: (tenantId) => (this.scheduler.busy(tenantId) ? this.scheduler.whenIdle(tenantId) : null),
    });
    this.scheduler = new EngineScheduler({
      tables: o.tables,
      intervalMs: o.intervalMs,
      workerFile: o.workerFile,
      warmUp: o.warmUp,
      getShards: () => this.shards(),
      onTransitions: (shardId, ts) => this.onTransitions(shardId, ts),
      onEvaluated: (shardId, result) => this.onEvaluated(shardId, result.healthOnly === true),
      onCycle: (ms) => o.metrics.engineCycleSeconds.observe(ms / 1000),
      onError: (shardId, err) => log.error('evaluation failed', { tenant: shardId, err: String((err as Error)?.stack ?? err) }),
    });
    o.cluster?.attach({
      requestEvaluation: (tenantId) => this.scheduler.requestEvaluation(tenantId),
      busy: (tenantId) => this.scheduler.busy(tenantId),
      whenIdle: (tenantId) => this.scheduler.whenIdle(tenantId),
      roleChanged: (role) => this.roleChanged(role),
    });
  }

  /** Whether this replica decides (single process; cluster leader; cluster replica in fallback). */
  private decides(): boolean {
    return this.o.cluster === undefined || this.o.cluster.evaluates();
  }

  private roleChanged(role: ClusterRole): void {
    // A new leader (or a replica falling back) evaluates every tenant at once instead of at
    // the next tick: its windows are warm, its statuses are the last table's.
    if (role !== 'follower' && this.started) for (const t of this.o.tenants.all()) if (t.rules.size > 0) this.scheduler.requestEvaluation(t.id);
  }

  /** Where transitions are announced (the webhook dispatcher). */
  setPublisher(p: EventPublisher): void {
    this.publish = p;
  }

  // ── lifecycle ────────────────────────────────────────────────────────────────────────
  /** Called after rules are loaded: restores counters, then starts the cycle. */
  start(): void {
    for (const t of this.o.tenants.all()) {
      const c = this.counters.get(t.id, 'counters');
      if (c) t.counters = { routed: c.routed, reported: c.reported, failovers: 0 };
      // The larger wins: the trail may have been pruned; the checkpoint may lag the last events.
      t.counters.failovers = Math.max(this.events.count(t.id), c?.failovers ?? 0);
      // The cycle's slot list, built now rather than by the first cycle, under traffic.
      t.slots();
    }
    this.scheduler.start();
    this.started = true;
    this.startedAtMs = Date.now();
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await this.scheduler.stop();
    // Never started (a failed start-up): its counters were not restored, so they are not checkpointed over the stored ones.
    if (!this.started) return;
    for (const t of this.o.tenants.all()) this.checkpoint(t.id, true);
    await Promise.allSettled([...this.pendingWrites]);
  }

  running(): boolean {
    return this.started && !this.stopped;
  }

  stats() {
    return this.scheduler.stats();
  }

  intervalMs(): number {
    return this.o.intervalMs;
  }

  /** Resolves once the worker pool has answered an empty task (readiness). */
  pingPool(timeoutMs: number): Promise<void> {
    // An empty task evaluates no rule, so any tenant's configuration will do.
    const first = this.o.tenants.all()[Symbol.iterator]().next();
    if (first.done) return Promise.reject(new Error('no tenant configured'));
    return this.scheduler.ping(this.configOf(first.value), timeoutMs);
  }

  /** The resolved engine configuration of a tenant (cached until its settings change). */
  configOf(t: Tenant): TenantEngineConfig {
    let c = this.configs.get(t.id);
    if (!c) {
      c = engineConfigFor(t);
      this.configs.set(t.id, c);
    }
    return c;
  }

  /** Rules of the tenant whose published decision source is currently `mab` (/v1/stats bandit.rule_count). */
  banditRuleCount(tenantId: string): number {
    const t = this.o.tenants.find(tenantId);
    if (!t) return 0;
    let n = 0;
    for (const rule of t.rules.values()) {
      const seg = ruleSegment(this.o.tables.ruleSegs, rule.slot);
      if (seg.ruleI32[ruleI32Base(rule.slot) + RI_DECISION_SOURCE] === DecisionSource.Mab) n++;
    }
    return n;
  }

  /** Call after changing a tenant's settings or overrides; takes effect at its next evaluation. */
  configChanged(t: Tenant): void {
    this.configs.delete(t.id);
    this.scheduler.requestEvaluation(t.id);
  }

  private *shards(): Iterable<ShardSpec> {
    const healthOnly = !this.decides();
    for (const t of this.o.tenants.all()) {
      if (t.rules.size === 0) continue;
      yield { shardId: t.id, slots: t.slots(), config: this.configOf(t), ...(healthOnly && { healthOnly }) };
    }
  }

  // ── hot path hook ────────────────────────────────────────────────────────────────────
  outcomeRecorded(tenant: Tenant, outcome: RecordedOutcome, nowMs: number): void {
    const cluster = this.o.cluster;
    cluster?.outcomeRecorded(outcome.rule, outcome.processor, outcome.window, outcome.kind, outcome.latencyMs, nowMs, outcome.run);
    if (this.started && wantsEarlyEvaluation(this.o.tables, outcome, this.configOf(tenant).tier1, nowMs)) {
      // In a cluster the leader must hear of it at once (the batch ships now, flagged).
      cluster?.fastPath(tenant.id);
      if (this.decides()) this.scheduler.requestRuleEvaluation(tenant.id, outcome.rule.slot);
    }
  }

  // ── rule lifecycle ───────────────────────────────────────────────────────────────────
  created(tenant: Tenant, ruleId: string, slot: number): void {
    const rule = tenant.rules.get(ruleId)!;
    this.bySlot[slot] = rule;
    this.o.cluster?.ruleAdded(tenant.id, rule);
    if (!this.started) {
      const saved = this.checkpoints.get(tenant.id, ruleId);
      const values = saved === undefined ? null : checkpointValues(saved);
      if (values !== null) restoreRule(this.o.tables, slot, values);
    }
  }

  release(tenant: Tenant, slot: number): void {
    const rule = this.bySlot[slot];
    if (rule) this.o.cluster?.ruleRemoved(tenant.id, rule);
    if (rule) this.track(this.checkpoints.remove(tenant.id, rule.record.rule_id));
    this.freeWhenIdle(tenant, slot, rule);
  }

  shardBusy(tenant: Tenant): boolean {
    return this.scheduler.busy(tenant.id);
  }

  whenShardIdle(tenant: Tenant): Promise<void> {
    return this.scheduler.whenIdle(tenant.id);
  }

  /**
   * A PATCH moved the rule to a new slot (no task is running on the tenant now): the old slot
   * goes, the rule's checkpoint is rewritten from the new one at once (a processor that left
   * the rule must not come back at the next start), and the rule is evaluated soon.
   */
  replaced(tenant: Tenant, oldSlot: number, rule: LiveRule): void {
    const old = this.bySlot[oldSlot];
    if (old) this.o.cluster?.ruleRemoved(tenant.id, old);
    this.o.cluster?.ruleAdded(tenant.id, rule);
    this.freeWhenIdle(tenant, oldSlot, old);
    this.track(this.checkpoints.put(tenant.id, rule.record.rule_id, storedCheckpoint(snapshotRule(this.o.tables, rule.slot))));
    if (this.started) this.scheduler.requestEvaluation(tenant.id);
  }

  private freeWhenIdle(tenant: Tenant, slot: number, rule: LiveRule | undefined): void {
    // The tenant's slot list no longer has the slot; a task already running may still read
    // it, so the slot is recycled only once the tenant's shard is idle.
    this.scheduler.whenIdle(tenant.id).then(() => {
      if (this.bySlot[slot] === rule) this.bySlot[slot] = undefined;
      this.o.tables.freeRule(slot);
    });
  }

  // ── operator commands ────────────────────────────────────────────────────────────────
  /**
   * Hands `cmd` to the rule's next evaluation (requested now) and resolves once a worker has
   * applied it, so the caller can answer with the rule's new health. The caller checks that
   * the command applies (e.g. the primary is not already failed_over); the worker re-checks.
   */
  command(tenant: Tenant, rule: LiveRule, cmd: ManualCommand, timeoutMs = 10_000): Promise<void> {
    if (!this.running()) return Promise.reject(new Error('engine not running'));
    if (!this.decides()) return Promise.reject(new NotLeaderError(this.o.cluster!.status().leader_id));
    const seg = ruleSegment(this.o.tables.ruleSegs, rule.slot);
    const ib = ruleI32Base(rule.slot);
    if (cmd === ManualCommand.Recover) {
      // The front thread owns the run counters: a finished outage's run must not trip it again.
      Atomics.store(seg.ruleI32, ib + RI_RUN_PRIMARY, 0);
      Atomics.store(seg.ruleI32, ib + RI_RUN_SECONDARY, 0);
    }
    Atomics.store(seg.ruleI32, ib + RI_COMMAND, cmd);
    return new Promise<void>((resolve, reject) => {
      const waiters = this.commandWaiters.get(tenant.id) ?? [];
      const timer = setTimeout(() => {
        const i = waiters.indexOf(w);
        if (i >= 0) waiters.splice(i, 1);
        reject(new Error('the engine did not take the command in time'));
      }, timeoutMs);
      const w = {
        rule,
        done: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      waiters.push(w);
      this.commandWaiters.set(tenant.id, waiters);
      this.scheduler.requestEvaluation(tenant.id);
    });
  }

  /** After an evaluation of the tenant: wake the commands it took. */
  private settleCommands(tenantId: string): void {
    const waiters = this.commandWaiters.get(tenantId);
    if (!waiters) return;
    const left = waiters.filter((w) => {
      const seg = ruleSegment(this.o.tables.ruleSegs, w.rule.slot);
      if (Atomics.load(seg.ruleI32, ruleI32Base(w.rule.slot) + RI_COMMAND) !== ManualCommand.None) return true;
      // The failover event of the command is being appended to the audit trail: answer after it.
      void Promise.allSettled([...this.pendingWrites]).then(w.done);
      return false;
    });
    if (left.length > 0) this.commandWaiters.set(tenantId, left);
    else this.commandWaiters.delete(tenantId);
  }

  // ── results ──────────────────────────────────────────────────────────────────────────
  private onTransitions(tenantId: string, transitions: Transition[]): void {
    const tenant = this.o.tenants.find(tenantId);
    if (!tenant) return;
    // Side effects (audit, counters, webhooks) belong to the replica that decides: a task
    // that outlived this replica's lease is not the cluster's decision.
    if (!this.decides()) {
      this.droppedTransitions += transitions.length;
      return;
    }
    for (const t of transitions) {
      const rule = this.bySlot[t.slot];
      if (!rule || tenant.rules.get(rule.record.rule_id) !== rule) continue;
      if (t.event === 'failover.triggered') {
        const ev = failoverEventOf(rule.record, t);
        tenant.counters.failovers++;
        this.o.metrics.failovers.inc(failoverLabels(tenantId, ev));
        this.appendEvent(tenantId, t.atMs, ev);
      }
      log.info('processor transition', { tenant: tenantId, rule_id: rule.record.rule_id, event: t.event, from: t.from, to: t.to, reason: t.reason });
      try {
        this.publish(tenantId, t.event, eventData(rule.record, t), t.atMs);
      } catch (e) {
        log.error('event publish failed', { tenant: tenantId, err: String(e) });
      }
    }
  }

  private onEvaluated(tenantId: string, healthOnly: boolean): void {
    if (!healthOnly) {
      const tenant = this.o.tenants.find(tenantId);
      if (tenant) this.o.cluster?.evaluated(tenant);
    }
    this.checkpoint(tenantId);
  }

  /**
   * Checkpoints the rules of a tenant that have seen traffic (in slices, at most once per half
   * interval: checkpoint-writer.ts), and its counters. `now`: everything at once (stop).
   */
  private checkpoint(tenantId: string, now = false): void {
    this.settleCommands(tenantId);
    const tenant = this.o.tenants.find(tenantId);
    if (!tenant) return;
    this.retryUnsavedEvents();
    // A cluster follower's engine state is the leader's (from its table): the leader checkpoints it.
    if (this.decides()) {
      if (now) this.checkpointer.writeNow(tenant);
      else this.checkpointer.request(tenant);
    }
    const c = tenant.counters;
    this.track(this.counters.put(tenantId, 'counters', { routed: c.routed, reported: c.reported, failovers: c.failovers }));
    const pruning = this.retention.maybePrune(tenantId);
    if (pruning !== null) this.track(pruning);
  }

  private appendEvent(tenantId: string, atMs: number, ev: FailoverEventRecord): void {
    this.track(
      this.events.append(tenantId, atMs, ev).catch((e) => {
        this.unsavedEvents.push({ tenantId, atMs, ev });
        if (this.unsavedEvents.length > MAX_UNSAVED_EVENTS) {
          this.unsavedEvents.splice(0, this.unsavedEvents.length - MAX_UNSAVED_EVENTS);
          log.error('failover audit events dropped: the store has refused writes for too long', { kept: MAX_UNSAVED_EVENTS });
        }
        throw e;
      }),
    );
  }

  private retryUnsavedEvents(): void {
    if (this.unsavedEvents.length === 0) return;
    const batch = this.unsavedEvents;
    this.unsavedEvents = [];
    for (const u of batch) this.appendEvent(u.tenantId, u.atMs, u.ev);
  }

  /**
   * Checkpoints and audit appends are fire-and-forget: a refused one (full disk) is written
   * again at the next checkpoint (the snapshot is retaken each cycle; failed audit appends are
   * queued), and the failure is logged once per episode, not once per write and cycle.
   */
  private track(p: Promise<unknown>): void {
    this.pendingWrites.add(p);
    p.then(
      () => {
        this.pendingWrites.delete(p);
        if (this.failedWrites > 0) {
          log.info('engine checkpoints stored again', { failed_writes: this.failedWrites });
          this.failedWrites = 0;
        }
      },
      (e) => {
        this.pendingWrites.delete(p);
        if (this.failedWrites++ === 0) {
          log.error('engine checkpoint not stored; retried every cycle until the store takes writes', { err: String((e as Error)?.message ?? e) });
        }
      },
    );
  }
}

/** An operator command reached a cluster follower: only the leader evaluates. */
export class NotLeaderError extends Error {
  constructor(readonly leaderId: string | null) {
    super(leaderId === null ? 'no cluster leader is elected right now; retry in a few seconds' : `this replica does not lead the cluster; send the command to replica ${leaderId}`);
    this.name = 'NotLeaderError';
  }
}

/** Failover counter labels; `tenant_id` is added for tenants other than `default`. */
export function failoverLabels(tenantId: string, ev: FailoverEventRecord): Record<string, string> {
  const labels: Record<string, string> = { rule_id: ev.rule_id, from_processor: ev.from_processor, to_processor: ev.to_processor };
  if (tenantId !== 'default') labels.tenant_id = tenantId;
  return labels;
}
