/**
 * The leader lease: one replica of the cluster holds it and runs the engine's evaluation for
 * everyone. The lease is a Redis key set with NX and an expiry (PX), holding
 * `<replica id>:<epoch>`; the epoch comes from a counter INCRemented at every acquisition, so
 * it only grows and names one leadership for its whole life.
 *
 * Safety against a paused leader (GC, SIGSTOP, a stalled VM) that wakes after its lease
 * expired and another replica took over:
 *  1. The holder keeps its own deadline on the monotonic clock: the time it SENT the last
 *     successful acquire/renew plus the lease time, minus a drift margin. Past that deadline
 *     it no longer counts itself leader, whatever Redis says, before any publish.
 *  2. Renewal is a script that extends the key only while it still holds our value.
 *  3. Every publish is fenced by a script that compares the lease value (which carries the
 *     epoch) atomically with the write (see decision-table.ts), and followers reject tables
 *     of an older epoch than one they have seen.
 */
import { log } from '../log.js';
import type { ClusterKeys } from './keys.js';
import type { GuardedRedis } from './redis-client.js';
import { LuaScript } from './script.js';

/**
 * KEYS: lease, epoch. ARGV: replica id, lease ms, the highest epoch this replica has seen.
 * Returns [epoch, value] when acquired, [0, current holder] when not.
 *
 * The floor covers a Redis that lost its data (restarted without persistence): the counter
 * is raised to the highest epoch any replica has seen, and a holder elected on the reset
 * counter (an epoch below what we have seen) is deposed, so epochs only grow for every
 * replica and followers never have to accept an older one.
 */
const ACQUIRE = new LuaScript(
  `local floor = tonumber(ARGV[3])
local ce = tonumber(redis.call('GET', KEYS[2]) or '0')
if ce < floor then redis.call('SET', KEYS[2], floor) end
local cur = redis.call('GET', KEYS[1])
if cur then
  local he = tonumber(string.match(cur, ':(%d+)$') or '0')
  if he >= floor then return {0, cur} end
  redis.call('DEL', KEYS[1])
end
local e = redis.call('INCR', KEYS[2])
local v = ARGV[1] .. ':' .. e
redis.call('SET', KEYS[1], v, 'NX', 'PX', ARGV[2])
return {e, v}`,
  2,
);

/** KEYS: lease. ARGV: our value, lease ms. 1 = extended, 0 = the lease is not ours any more. */
const RENEW = new LuaScript(
  `if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0`,
  1,
);

/** KEYS: lease. ARGV: our value. Deletes the lease only if it is ours (graceful stop). */
const RELEASE = new LuaScript(
  `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`,
  1,
);

export interface LeaseOptions {
  conn: GuardedRedis;
  keys: ClusterKeys;
  replicaId: string;
  /** Lease time (PX). Default 3000. */
  leaseMs?: number;
  /** Renewal (holder) and acquisition attempts (others) every this many ms. Default leaseMs / 4. */
  tickMs?: number;
  /** Monotonic clock, ms. Default performance.now. */
  now?: () => number;
  /** Called on every change of leadership, after the state changed. */
  onChange?: (leader: boolean, epoch: number) => void;
}

export interface LeaseState {
  leader: boolean;
  /** Our epoch while leader; the last epoch seen otherwise (0 = none yet). */
  epoch: number;
  /** Replica id of the holder as last seen ('' = unknown / none). */
  holder: string;
  /** Times this replica acquired / lost the lease. */
  acquired: number;
  lost: number;
}

export class LeaderLease {
  private readonly leaseMs: number;
  private readonly tickMs: number;
  private readonly driftMs: number;
  private readonly now: () => number;
  private value = '';
  private validUntil = -Infinity;
  private held = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;
  private ticking: Promise<void> | null = null;
  readonly state: LeaseState = { leader: false, epoch: 0, holder: '', acquired: 0, lost: 0 };

  constructor(private readonly o: LeaseOptions) {
    this.leaseMs = o.leaseMs ?? 3000;
    this.tickMs = o.tickMs ?? Math.max(50, Math.floor(this.leaseMs / 4));
    // Clock-rate differences between this host and Redis: give up a bit before Redis expires the key.
    this.driftMs = Math.max(20, Math.floor(this.leaseMs * 0.05));
    this.now = o.now ?? (() => performance.now());
  }

  start(): void {
    if (this.timer !== undefined || this.stopped) return;
    const loop = () => {
      this.ticking = this.tick().finally(() => {
        this.ticking = null;
        if (!this.stopped) {
          this.timer = setTimeout(loop, this.tickMs);
          this.timer.unref();
        }
      });
    };
    loop();
  }

  /**
   * True only while we hold the lease by our own monotonic clock. Check it immediately before
   * any side effect that only the leader may cause.
   */
  isLeader(): boolean {
    if (!this.held) return false;
    if (this.now() < this.validUntil) return true;
    this.demote('lease expired by the local clock before it was renewed');
    return false;
  }

  /** The lease value `<replica>:<epoch>` the fence scripts compare ('' when not leader). */
  fenceValue(): string {
    return this.isLeader() ? this.value : '';
  }

  epoch(): number {
    return this.state.epoch;
  }

  /** An epoch seen elsewhere (a published table): the floor of our next acquisition. */
  observeEpoch(e: number): void {
    if (e > this.state.epoch && !this.held) this.state.epoch = e;
  }

  /** Remaining validity by the local clock, ms (0 when not leader). */
  remainingMs(): number {
    return this.held ? Math.max(0, this.validUntil - this.now()) : 0;
  }

  /** One renewal or acquisition attempt (the timer calls it; tests may too). */
  async tick(): Promise<void> {
    if (this.stopped) return;
    if (this.held) {
      if (!this.isLeader()) return;
      const sentAt = this.now();
      try {
        const ok = await this.o.conn.run((r) => RENEW.run(r, [this.o.keys.lease], [this.value, this.leaseMs]));
        if (!this.held || this.stopped) return;
        if (ok === 1) this.validUntil = sentAt + this.leaseMs - this.driftMs;
        else this.demote('the lease is held by another replica');
      } catch {
        // Unreachable Redis: we stay leader until our own deadline, then step down (isLeader).
      }
      return;
    }
    const sentAt = this.now();
    try {
      const res = (await this.o.conn.run((r) => ACQUIRE.run(r, [this.o.keys.lease, this.o.keys.epoch], [this.o.replicaId, this.leaseMs, this.state.epoch]))) as [number, string];
      if (this.stopped) {
        if (res[0] > 0) await this.release(String(res[1]));
        return;
      }
      const epoch = Number(res[0]);
      const value = String(res[1]);
      if (epoch > 0) {
        this.held = true;
        this.value = value;
        this.validUntil = sentAt + this.leaseMs - this.driftMs;
        this.state.leader = true;
        this.state.epoch = epoch;
        this.state.holder = this.o.replicaId;
        this.state.acquired++;
        log.info('cluster leader lease acquired', { replica: this.o.replicaId, epoch });
        this.o.onChange?.(true, epoch);
      } else {
        const { holder, epoch: seen } = parseLeaseValue(value);
        this.state.holder = holder;
        if (seen > this.state.epoch) this.state.epoch = seen;
      }
    } catch {
      // Redis unreachable: try again at the next tick.
    }
  }

  /** Stops the timer and, if we lead, deletes the lease so another replica takes over at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.ticking?.catch(() => {});
    if (this.held) {
      const v = this.value;
      this.demote('stopping');
      await this.release(v);
    }
  }

  private async release(value: string): Promise<void> {
    try {
      await this.o.conn.run((r) => RELEASE.run(r, [this.o.keys.lease], [value]));
    } catch {
      // It expires on its own.
    }
  }

  private demote(why: string): void {
    if (!this.held) return;
    this.held = false;
    this.validUntil = -Infinity;
    this.state.leader = false;
    this.state.holder = '';
    this.state.lost++;
    log.warn('cluster leader lease lost', { replica: this.o.replicaId, epoch: this.state.epoch, reason: why });
    this.o.onChange?.(false, this.state.epoch);
  }
}

export function parseLeaseValue(v: string): { holder: string; epoch: number } {
  const i = v.lastIndexOf(':');
  if (i < 0) return { holder: v, epoch: 0 };
  const epoch = Number(v.slice(i + 1));
  return { holder: v.slice(0, i), epoch: Number.isFinite(epoch) ? epoch : 0 };
}
