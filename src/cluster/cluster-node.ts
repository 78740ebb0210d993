/**
 * This replica's part in a cluster that behaves as one engine (SERVICE_REDIS_URL set).
 *
 *   outcome (front thread) ──► own windows + DeltaRecorder ──► OutcomeShipper ──XADD──► stream
 *   stream ──XREAD──► OutcomeReader ──► others' deltas merged into own windows (all replicas)
 *   leader:   evaluates (Tier 1/2/3) on the merged windows ──► TableBuilder (delta or snapshot, sliced)
 *             ──► TablePublisher ──(fenced)──► snapshot / delta list + PUBLISH
 *   follower: TableFollower (push + heal poll) ──► delta on its base / snapshot applied to own rows
 *             (sliced); health from own merged windows
 *   fallback: no fresh table for staleMs (Redis down, no leader) ──► evaluates its own outcomes, like a single process
 *
 * The route and outcome paths only touch memory: recording a delta is a few increments; every
 * Redis call happens on timers and connections of their own, none of which a request awaits.
 */
import { hostname } from 'node:os';
import { log } from '../log.js';
import { processorStatus } from '../shm/processor-rows.js';
import { ProcessorStatus, WINDOW_MASK, WINDOW_SHIFT } from '../shm/layout.js';
import type { SharedTables } from '../shm/tables.js';
import type { OutcomeKind } from '../shm/window.js';
import type { TenantRegistry } from '../tenants/registry.js';
import type { LiveRule, Tenant } from '../tenants/tenant.js';
import { ClusterIndex } from './cluster-index.js';
import { CommandRelay, type CommandAnswer, type ForwardedCommand, type RelayFailure } from './command-relay.js';
import { DeliveryTakeover, type OrphanDeliveries } from './delivery-takeover.js';
import { RemoteRuns } from './remote-runs.js';
import type { ClusterSettings } from './cluster-config.js';

export type { ClusterSettings } from './cluster-config.js';
export type { OrphanDeliveries } from './delivery-takeover.js';
import { TableFollower, TablePublisher } from './decision-table.js';
import { clusterKeys, type ClusterKeys } from './keys.js';
import { LeaderLease } from './lease.js';
import { decodeDeltas, DeltaRecorder } from './outcome-delta.js';
import { OutcomeReader, OutcomeShipper, type ReceivedBatch } from './outcome-stream.js';
import { connectRedis, GuardedRedis } from './redis-client.js';
import { TableBuilder } from './table-builder.js';
import type { readTableHeader } from './table-codec.js';
import { visitTableSliced } from './table-apply.js';
import { applyRuleEntry } from './table-rows.js';
import { mergeDelta, MergeResult } from './window-merge.js';

export type ClusterRole = 'leader' | 'follower' | 'fallback';

/** What the cluster needs of the engine on this replica. */
export interface ClusterEngineHooks {
  /** Evaluate the tenant now (the leader, on another replica's fast-path flag). */
  requestEvaluation(tenantId: string): void;
  /** True while an evaluation task runs on the tenant. */
  busy(tenantId: string): boolean;
  whenIdle(tenantId: string): Promise<void>;
  /** The role changed (the engine switches between full and health-only evaluation). */
  roleChanged(role: ClusterRole): void;
}

export interface ClusterEvents {
  leaseChange?: (change: 'acquired' | 'lost') => void;
  batchShipped?: (batches: number, bytes: number) => void;
  batchDropped?: (batches: number) => void;
  /** A remote batch merged: how old its first outcome was, seconds. */
  batchMerged?: (lagSeconds: number) => void;
  table?: (result: 'applied' | 'rejected_stale' | 'gap' | 'published' | 'fenced' | 'publish_failed') => void;
  /** An operator command forwarded to the leader ended (answered / why not) after `seconds`; or served here as leader. */
  command?: (result: ForwardResult | 'served', seconds: number) => void;
}

/** How a forwarded operator command ended on the replica that forwarded it. */
export type ForwardResult = 'answered' | 'no_leader' | 'redis_unreachable' | 'no_answer' | 'table_not_applied';

/** A forwarded command's outcome: the leader's answer, once this replica applied its table; or why not. */
export type ForwardOutcome = { ok: true; answer: CommandAnswer } | { ok: false; reason: Exclude<ForwardResult, 'answered'>; leaderId: string | null };

/** A table version: the (epoch, version) a follower must hold to reflect something. */
interface TableVersion {
  epoch: number;
  version: number;
}

export interface ClusterStatus {
  replica_id: string;
  role: ClusterRole;
  leader: boolean;
  leader_id: string | null;
  epoch: number;
  /** Seconds since this replica last knew it held the leader's current table (0 while it leads). */
  table_age_seconds: number | null;
  redis_connected: boolean;
}

/** Longest front-thread slice while building or applying a decision table (ms). */
const SLICE_MS = 2;

export function defaultReplicaId(port: number): string {
  return `${hostname()}:${port}`;
}

export class ClusterNode {
  readonly keys: ClusterKeys;
  readonly index = new ClusterIndex();
  private readonly conn: GuardedRedis;
  private readonly lease: LeaderLease;
  private readonly recorder = new DeltaRecorder();
  private readonly shipper: OutcomeShipper;
  private readonly reader: OutcomeReader;
  private readonly publisher: TablePublisher;
  private readonly follower: TableFollower;
  private readonly builder: TableBuilder;
  /** Tenants whose table is being built or published; `again`: evaluated meanwhile, publish once more. */
  private readonly publishing = new Map<string, { again: boolean }>();
  /** Longest front-thread slice (ms) of the last table applied here, for the benchmark. */
  lastApplySliceMs = 0;
  private hooks: ClusterEngineHooks | null = null;
  private takeover: DeliveryTakeover | null = null;
  private aliveTimer: ReturnType<typeof setInterval> | undefined;
  private orphanTimer: ReturnType<typeof setInterval> | undefined;
  private readonly remoteRuns: RemoteRuns;
  private currentRole: ClusterRole = 'follower';
  private roleTimer: ReturnType<typeof setInterval> | undefined;
  private readonly startedAt = performance.now();
  /** Monotonic ms when this replica last knew it led: a leader that steps down starts as a follower, not stale. */
  private lastLeaderAt = -Infinity;
  private stopped = false;
  private readonly relay: CommandRelay;
  /** Per tenant, evaluations finished here as leader (each asks for a publish of the rows as they are now). */
  private readonly evaluatedSeq = new Map<string, number>();
  /** Per tenant, the last table published and the evaluations (seq) it reflects. */
  private readonly lastPublished = new Map<string, TableVersion & { covers: number }>();
  /** As leader: forwarded commands waiting for the publish that reflects them, per tenant. */
  private readonly publishWaiters = new Map<string, { covers: number; done: (t: TableVersion) => void }[]>();
  /** As follower: forwarded commands waiting for the table that reflects them, per tenant. */
  private readonly tableWaiters = new Map<string, (TableVersion & { done: () => void })[]>();
  /** Remote deltas refused (too old / ahead of our clock / unknown window), for the stats. */
  readonly mergeStats = { merged: 0, tooOld: 0, tooNew: 0, unknown: 0 };

  constructor(
    readonly settings: ClusterSettings,
    private readonly tables: SharedTables,
    private readonly tenants: TenantRegistry,
    private readonly events: ClusterEvents = {},
  ) {
    this.keys = clusterKeys(settings.cluster);
    this.remoteRuns = new RemoteRuns(tables, (key) => {
      const ref = this.index.window(key);
      return ref && this.tenants.find(ref.tenantId)?.rules.get(ref.rule.record.rule_id) === ref.rule ? ref : undefined;
    });
    const id = settings.replicaId;
    this.conn = new GuardedRedis(connectRedis({ url: settings.redisUrl, name: `engine:${id}:main`, commandTimeoutMs: 500 }), 'cluster');
    this.lease = new LeaderLease({
      conn: this.conn,
      keys: this.keys,
      replicaId: id,
      leaseMs: settings.leaseMs,
      onChange: (leader) => {
        this.events.leaseChange?.(leader ? 'acquired' : 'lost');
        if (leader) this.follower.resetApplied();
        // A new leadership (or none) starts every tenant again with a snapshot.
        this.builder.reset();
        this.updateRole();
      },
    });
    this.shipper = new OutcomeShipper({
      conn: this.conn,
      keys: this.keys,
      replicaId: id,
      recorder: this.recorder,
      intervalMs: settings.shipIntervalMs,
      onShipped: (b, bytes) => this.events.batchShipped?.(b, bytes),
      onDropped: (b) => this.events.batchDropped?.(b),
    });
    this.reader = new OutcomeReader({ url: settings.redisUrl, keys: this.keys, replicaId: id, onBatch: (b) => this.merge(b) });
    this.publisher = new TablePublisher(this.conn, this.keys, this.lease);
    this.relay = new CommandRelay({ url: settings.redisUrl, conn: this.conn, keys: this.keys, replicaId: id, fenceValue: () => this.lease.fenceValue() });
    this.builder = new TableBuilder(tables, (rule) => this.index.ruleKeyOf(rule), { snapshotMs: settings.snapshotMs, sliceMs: SLICE_MS });
    this.follower = new TableFollower({
      url: settings.redisUrl,
      conn: this.conn,
      keys: this.keys,
      replicaId: id,
      healMs: settings.healMs,
      following: () => !this.lease.isLeader(),
      apply: (buf, h) => this.applyTable(buf, h),
      onEpoch: (e) => this.lease.observeEpoch(e),
      onStale: () => this.events.table?.('rejected_stale'),
      onGap: () => this.events.table?.('gap'),
    });
  }

  /** Where the leader finds and takes over a gone replica's webhook deliveries (shared store only). */
  attachOrphans(o: OrphanDeliveries): void {
    this.takeover = new DeliveryTakeover(this.conn, this.keys, this.settings.replicaId, this.settings.leaseMs * 3, o);
  }

  /**
   * Says "this replica is alive" (a key that expires after 3 lease times unless refreshed).
   * Called once before the webhook queue is resumed at start, so that a leader does not take
   * over the queue of a replica that is coming back.
   */
  async announceAlive(): Promise<void> {
    if (!this.conn.connected()) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, 1000);
        this.conn.redis.once('ready', () => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    await this.takeover?.heartbeat();
  }

  /** Connects the engine; call before start(). */
  attach(hooks: ClusterEngineHooks): void {
    this.hooks = hooks;
  }

  start(): void {
    this.lease.start();
    this.shipper.start();
    this.reader.start();
    this.follower.start();
    // Roles also change with time alone (a table going stale), so they are re-checked often.
    this.roleTimer = setInterval(() => {
      this.updateRole();
      this.remoteRuns.expire(Date.now());
    }, 250);
    this.roleTimer.unref();
    this.aliveTimer = setInterval(() => void this.announceAlive(), this.settings.leaseMs);
    this.aliveTimer.unref();
    this.orphanTimer = setInterval(() => {
      if (this.lease.isLeader()) void this.takeover?.scan(() => this.lease.isLeader());
    }, this.settings.leaseMs * 2);
    this.orphanTimer.unref();
    log.info('cluster mode', { replica: this.settings.replicaId, cluster: this.settings.cluster, lease_ms: this.settings.leaseMs, stale_ms: this.settings.staleMs });
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.roleTimer);
    clearInterval(this.aliveTimer);
    clearInterval(this.orphanTimer);
    await this.shipper.stop();
    await this.lease.stop();
    await Promise.allSettled([this.reader.stop(), this.follower.stop(), this.relay.stop()]);
    for (const ws of this.tableWaiters.values()) for (const w of ws) w.done();
    this.conn.close();
  }

  role(): ClusterRole {
    return this.currentRole;
  }

  /** Leader or fallback: this replica evaluates fully and causes side effects (audit, webhooks). */
  evaluates(): boolean {
    const r = this.updateRole();
    return r !== 'follower';
  }

  isLeader(): boolean {
    return this.lease.isLeader();
  }

  status(): ClusterStatus {
    const role = this.updateRole();
    const age = role === 'leader' ? 0 : this.follower.lastFreshAt === -Infinity ? null : (performance.now() - this.follower.lastFreshAt) / 1000;
    return {
      replica_id: this.settings.replicaId,
      role,
      leader: role === 'leader',
      leader_id: role === 'leader' ? this.settings.replicaId : this.lease.state.holder || null,
      epoch: Math.max(this.lease.epoch(), this.follower.maxEpoch),
      table_age_seconds: age === null ? null : Math.round(age * 1000) / 1000,
      redis_connected: this.conn.connected(),
    };
  }

  /** Redis round trips made by this replica so far (commands, pipelines, scripts, blocking reads). */
  roundTrips(): number {
    return this.conn.calls + this.reader.stats().reads;
  }

  shipperStats() {
    return this.shipper.stats();
  }

  // ── engine hooks ─────────────────────────────────────────────────────────────────────
  ruleAdded(tenantId: string, rule: LiveRule): void {
    this.index.add(tenantId, rule);
  }

  ruleRemoved(tenantId: string, rule: LiveRule): void {
    this.index.remove(tenantId, rule);
  }

  /** Outcome path: record the delta (memory only); a fast-path trigger ships at once. */
  outcomeRecorded(rule: LiveRule, k: 0 | 1, window: number, kind: OutcomeKind, latencyMs: number, nowMs: number, run: number): void {
    const key = this.index.windowKeyOf(rule.slot, k);
    if (key !== 0) this.recorder.record(key, window, nowMs, kind, latencyMs, run);
  }

  /** This replica's fast path fired: the leader must evaluate now. */
  fastPath(tenantId: string): void {
    this.shipper.fastPath(tenantId);
  }

  /** After a full evaluation of the tenant on this replica: the leader publishes its table. */
  evaluated(tenant: Tenant): void {
    if (!this.lease.isLeader()) return;
    this.evaluatedSeq.set(tenant.id, (this.evaluatedSeq.get(tenant.id) ?? 0) + 1);
    const inFlight = this.publishing.get(tenant.id);
    if (inFlight) {
      inFlight.again = true; // one more publish once this one is done: tables of a tenant never race
      return;
    }
    const slot = { again: false };
    this.publishing.set(tenant.id, slot);
    void this.publishLoop(tenant, slot).finally(() => this.publishing.delete(tenant.id));
  }

  /** Table publisher counters (the benchmark reads the bytes). */
  publisherStats() {
    return { published: this.publisher.published, bytes: this.publisher.bytes, lastBuildSliceMs: this.builder.lastLongestSliceMs };
  }

  // ── operator commands on any replica ─────────────────────────────────────────────────
  /** As leader: how a command forwarded by a follower is applied (as a local request would be). */
  serveCommands(handler: (c: ForwardedCommand) => Promise<CommandAnswer>): void {
    this.relay.serve(async (c) => {
      const t0 = performance.now();
      const answer = await handler(c);
      if (answer.status < 300) {
        // The evaluation that took the command has finished (and asked for a publish): the
        // follower answers once it holds a table published after it.
        const seq = this.evaluatedSeq.get(c.tenant) ?? 0;
        const table = await this.publishedCovering(c.tenant, seq, c.deadline_ms - Date.now());
        if (table !== undefined) answer.table = table;
        else answer.tableMissing = true;
      }
      this.events.command?.('served', (performance.now() - t0) / 1000);
      return answer;
    });
  }

  /**
   * As follower: sends the command to the leader and resolves with its answer once the decision
   * table reflecting it is applied here (a route on this replica right after sees it), or with
   * why not by `timeoutMs`. Never rejects.
   */
  async forwardCommand(c: Omit<ForwardedCommand, 'id' | 'from' | 'deadline_ms'>, timeoutMs: number): Promise<ForwardOutcome> {
    const t0 = performance.now();
    const deadline = Date.now() + timeoutMs;
    const end = (o: ForwardOutcome): ForwardOutcome => {
      this.events.command?.(o.ok ? 'answered' : o.reason, (performance.now() - t0) / 1000);
      return o;
    };
    const leaderId = this.lease.state.holder || null;
    if (leaderId === null) return end({ ok: false, reason: this.conn.connected() ? 'no_leader' : 'redis_unreachable', leaderId });
    const a: CommandAnswer | RelayFailure = await this.relay.forward(c, deadline);
    if (a === 'redis_unreachable' || a === 'no_answer') return end({ ok: false, reason: a, leaderId });
    if (a.tableMissing === true) return end({ ok: false, reason: 'table_not_applied', leaderId });
    if (a.table !== undefined && !(await this.tableApplied(c.tenant, a.table, deadline - Date.now()))) {
      return end({ ok: false, reason: 'table_not_applied', leaderId });
    }
    return end({ ok: true, answer: a });
  }

  /** As leader: resolves with the first table of the tenant published with evaluation `seq` in it (undefined by the timeout). */
  private publishedCovering(tenantId: string, seq: number, timeoutMs: number): Promise<TableVersion | undefined> {
    const last = this.lastPublished.get(tenantId);
    if (last !== undefined && last.covers >= seq) return Promise.resolve({ epoch: last.epoch, version: last.version });
    return new Promise((resolve) => {
      const ws = this.publishWaiters.get(tenantId) ?? [];
      const w = {
        covers: seq,
        done: (t: TableVersion) => {
          clearTimeout(timer);
          resolve(t);
        },
      };
      const timer = setTimeout(() => {
        const i = ws.indexOf(w);
        if (i >= 0) ws.splice(i, 1);
        resolve(undefined);
      }, Math.max(0, timeoutMs));
      ws.push(w);
      this.publishWaiters.set(tenantId, ws);
    });
  }

  private notePublished(tenantId: string, p: TableVersion & { covers: number }): void {
    this.lastPublished.set(tenantId, p);
    const ws = this.publishWaiters.get(tenantId);
    if (!ws) return;
    const left = ws.filter((w) => {
      if (p.covers < w.covers) return true;
      w.done({ epoch: p.epoch, version: p.version });
      return false;
    });
    if (left.length > 0) this.publishWaiters.set(tenantId, left);
    else this.publishWaiters.delete(tenantId);
  }

  /** As follower: resolves true once this replica holds the tenant's table `t` or a newer one (or leads). */
  private tableApplied(tenantId: string, t: TableVersion, timeoutMs: number): Promise<boolean> {
    if (this.covers(tenantId, t)) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const ws = this.tableWaiters.get(tenantId) ?? [];
      const w = {
        ...t,
        done: () => {
          clearTimeout(timer);
          resolve(true);
        },
      };
      const timer = setTimeout(() => {
        const i = ws.indexOf(w);
        if (i >= 0) ws.splice(i, 1);
        resolve(this.covers(tenantId, t));
      }, Math.max(0, timeoutMs));
      ws.push(w);
      this.tableWaiters.set(tenantId, ws);
    });
  }

  private covers(tenantId: string, t: TableVersion): boolean {
    if (this.lease.isLeader()) return true; // this replica's rows are the cluster's decisions now
    const a = this.follower.appliedOf(tenantId);
    return a !== undefined && newerOrSame(a, t);
  }

  /** A table `t` was just written into the tenant's rows: wake the commands it covers. */
  private settleTableWaiters(tenantId: string, t: TableVersion): void {
    const ws = this.tableWaiters.get(tenantId);
    if (!ws) return;
    const left = ws.filter((w) => {
      if (!newerOrSame(t, w)) return true;
      w.done();
      return false;
    });
    if (left.length > 0) this.tableWaiters.set(tenantId, left);
    else this.tableWaiters.delete(tenantId);
  }

  // ── internals ────────────────────────────────────────────────────────────────────────
  private updateRole(): ClusterRole {
    let next: ClusterRole;
    if (this.lease.isLeader()) {
      next = 'leader';
      this.lastLeaderAt = performance.now();
    } else {
      const fresh = Math.max(this.follower.lastFreshAt, this.startedAt, this.lastLeaderAt);
      next = performance.now() - fresh <= this.settings.staleMs ? 'follower' : 'fallback';
    }
    if (next !== this.currentRole) {
      const prev = this.currentRole;
      this.currentRole = next;
      if (next === 'fallback') {
        log.warn('cluster: no fresh decision table; this replica now evaluates its own outcomes (fallback)', { replica: this.settings.replicaId, stale_ms: this.settings.staleMs });
      } else if (prev === 'fallback') {
        log.info('cluster: decision tables fresh again; fallback ended', { replica: this.settings.replicaId, role: next });
      }
      this.hooks?.roleChanged(next);
    }
    return next;
  }

  private async publishLoop(tenant: Tenant, slot: { again: boolean }): Promise<void> {
    do {
      slot.again = false;
      if (this.stopped || !this.lease.isLeader()) return;
      // The build starts after this: it reads rows that hold every evaluation counted so far.
      const covers = this.evaluatedSeq.get(tenant.id) ?? 0;
      const r = await this.publisher.publish(
        tenant.id,
        (epoch, version) => this.builder.build(tenant, epoch, version, () => this.lease.isLeader() && !this.stopped),
        (epoch, version) => {
          this.builder.published(tenant.id, epoch, version);
          this.notePublished(tenant.id, { epoch, version, covers });
        },
      );
      if (r === 'published') this.events.table?.('published');
      else {
        // Whatever the followers hold now, the next table of the tenant is a snapshot.
        this.builder.forget(tenant.id);
        if (r === 'fenced') this.events.table?.('fenced');
        else if (r === 'failed') this.events.table?.('publish_failed');
        // The stored chain was not our base (e.g. a publish lost in a timeout): snapshot at once.
        else if (r === 'broken') slot.again = true;
      }
    } while (slot.again);
  }

  /**
   * Writes a table's rules into this replica's rows, in slices of at most SLICE_MS with a
   * yield between them. An evaluation task started while this replica led (or fell back) may
   * still write the rows: the apply waits until it is done, so each field keeps a single writer.
   */
  private async applyTable(buf: Buffer, h: ReturnType<typeof readTableHeader>): Promise<'applied' | 'aborted'> {
    const tenant = this.tenants.find(h.tenantId);
    if (!tenant) return 'applied'; // a tenant this replica does not serve
    // The first table after start (or after leading) shows states, not transitions: not counted.
    const counting = this.follower.appliedOf(tenant.id) !== undefined;
    const done = await visitTableSliced(
      h,
      SLICE_MS,
      async () => {
        while (this.hooks?.busy(tenant.id)) await this.hooks.whenIdle(tenant.id);
        return !this.lease.isLeader() && !this.stopped;
      },
      (e) => {
        const rule = this.index.rule(tenant.id, e.key);
        if (!rule || tenant.rules.get(rule.record.rule_id) !== rule) return;
        const wasFailedOver = processorStatus(this.tables.ruleSegs, rule.slot, 0) === ProcessorStatus.FailedOver;
        applyRuleEntry(this.tables, rule.slot, e);
        // The leader's failover, seen here: /v1/stats counts it on every replica (the audit entry
        // and the webhook stay the leader's).
        if (counting && !wasFailedOver && e.procs[0].status === ProcessorStatus.FailedOver && rule.record.primary_id !== rule.record.secondary_id) tenant.counters.failovers++;
      },
    );
    this.lastApplySliceMs = done.longestSliceMs;
    if (!done.completed) return 'aborted';
    this.events.table?.('applied');
    this.updateRole();
    this.settleTableWaiters(tenant.id, h);
    return 'applied';
  }

  private merge(b: ReceivedBatch): void {
    const nowMs = Date.now();
    const fastTenants = new Set<string>(b.fast);
    if (b.data !== null) {
      decodeDeltas(b.data, (e) => {
        const ref = this.index.window(e.key);
        if (!ref || this.tenants.find(ref.tenantId)?.rules.get(ref.rule.record.rule_id) !== ref.rule) {
          this.mergeStats.unknown++;
          return;
        }
        const w = this.windowFor(ref.rule, ref.k);
        const res = mergeDelta(this.tables.windowSegs[w >> WINDOW_SHIFT], w & WINDOW_MASK, e, nowMs);
        if (this.remoteRuns.note(e.key, ref, b.replicaId, e.run, nowMs) && this.lease.isLeader()) fastTenants.add(ref.tenantId);
        if (res === MergeResult.Merged) this.mergeStats.merged++;
        else if (res === MergeResult.TooOld) this.mergeStats.tooOld++;
        else this.mergeStats.tooNew++;
      });
      if (Number.isFinite(b.firstAtMs)) this.events.batchMerged?.(Math.max(0, nowMs - b.firstAtMs) / 1000);
    }
    // Another replica's fast path fired: the leader evaluates those tenants now, on windows
    // that already hold the batch that carried the flag.
    if (fastTenants.size > 0 && this.lease.isLeader()) for (const t of fastTenants) this.hooks?.requestEvaluation(t);
  }

  /** The rule's window for processor k, allocated as the outcome path would. */
  private windowFor(rule: LiveRule, k: 0 | 1): number {
    return this.tables.windowOf(rule.slot, k, rule.record.primary_id === rule.record.secondary_id);
  }
}

function newerOrSame(a: TableVersion, b: TableVersion): boolean {
  return a.epoch > b.epoch || (a.epoch === b.epoch && a.version >= b.version);
}
