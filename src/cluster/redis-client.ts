/**
 * Redis connections for cluster mode, configured so that nothing waits on Redis: no offline
 * queue (a command while disconnected fails at once instead of queueing), short command
 * timeouts, reconnection with capped exponential back-off and jitter, and a circuit breaker
 * in front of every command so a slow or dead Redis costs one fast rejection per call, not a
 * timeout each time.
 *
 * Callers are background loops (shipping, reading, the lease, the decision table); the route
 * and outcome paths never call Redis.
 */
import { Redis } from 'ioredis';

export interface RedisConnOptions {
  /** `redis://host:port[/db]`. */
  url: string;
  /** Shown in `CLIENT LIST` (`engine:<replica>:<role>`). */
  name: string;
  /** Per-command timeout; the blocking reader passes its BLOCK time plus a margin. */
  commandTimeoutMs: number;
  connectTimeoutMs?: number;
}

/** Reconnect delay: 50 ms doubling to 2 s, with up to 25% jitter so replicas do not reconnect in step. */
export function reconnectDelayMs(attempt: number): number {
  const base = Math.min(2000, 50 * 2 ** Math.min(attempt, 10));
  return Math.round(base * (1 + Math.random() * 0.25));
}

export function connectRedis(o: RedisConnOptions): Redis {
  const r = new Redis(o.url, {
    connectionName: o.name,
    enableOfflineQueue: false,
    // A command in flight when the connection drops fails instead of being retried later.
    maxRetriesPerRequest: 0,
    commandTimeout: o.commandTimeoutMs,
    connectTimeout: o.connectTimeoutMs ?? 1000,
    retryStrategy: reconnectDelayMs,
    enableReadyCheck: true,
    lazyConnect: false,
    // Library info (CLIENT SETINFO) is one more round trip per connection; not needed.
    enableAutoPipelining: false,
  });
  // ioredis emits 'error' on every failed (re)connection; without a listener Node would
  // print each one. Connection state is reported through the breaker and the gauges instead.
  r.on('error', () => {});
  return r;
}

export class BreakerOpenError extends Error {
  constructor(what: string) {
    super(`redis unavailable (${what}): circuit open`);
    this.name = 'BreakerOpenError';
  }
}

export interface BreakerOptions {
  /** Consecutive failures that open the circuit. Default 3. */
  failures?: number;
  /** How long the circuit stays open before one trial call (doubles per failed trial, capped). */
  openMs?: number;
  maxOpenMs?: number;
  now?: () => number;
}

/**
 * Closed: calls pass. After `failures` consecutive failures: open, calls fail at once. After
 * `openMs`: half-open, one call passes as a trial; its success closes the circuit, its
 * failure reopens it for twice as long (up to `maxOpenMs`).
 */
export class Breaker {
  private consecutive = 0;
  private openUntil = 0;
  private openFor: number;
  private trialInFlight = false;
  private readonly threshold: number;
  private readonly baseOpenMs: number;
  private readonly maxOpenMs: number;
  private readonly now: () => number;
  /** Calls refused while open (for the metrics). */
  rejected = 0;

  constructor(
    private readonly what: string,
    o: BreakerOptions = {},
  ) {
    this.threshold = o.failures ?? 3;
    this.baseOpenMs = o.openMs ?? 500;
    this.maxOpenMs = o.maxOpenMs ?? 4000;
    this.openFor = this.baseOpenMs;
    this.now = o.now ?? (() => performance.now());
  }

  state(): 'closed' | 'open' | 'half-open' {
    if (this.consecutive < this.threshold) return 'closed';
    return this.now() < this.openUntil ? 'open' : 'half-open';
  }

  async run<T>(fn: () => Promise<T>): Promise<T> {
    const s = this.state();
    if (s === 'open' || (s === 'half-open' && this.trialInFlight)) {
      this.rejected++;
      throw new BreakerOpenError(this.what);
    }
    const trial = s === 'half-open';
    if (trial) this.trialInFlight = true;
    try {
      const v = await fn();
      this.consecutive = 0;
      this.openFor = this.baseOpenMs;
      return v;
    } catch (e) {
      this.consecutive++;
      if (this.consecutive >= this.threshold) {
        if (trial) this.openFor = Math.min(this.maxOpenMs, this.openFor * 2);
        this.openUntil = this.now() + this.openFor;
      }
      throw e;
    } finally {
      if (trial) this.trialInFlight = false;
    }
  }
}

/** A connection and its breaker: every command goes through `run`. */
export class GuardedRedis {
  readonly breaker: Breaker;
  /** Round trips attempted through this connection (a pipeline or a script counts once). */
  calls = 0;
  constructor(
    readonly redis: Redis,
    what: string,
    breaker?: BreakerOptions,
  ) {
    this.breaker = new Breaker(what, breaker);
  }

  connected(): boolean {
    return this.redis.status === 'ready';
  }

  run<T>(fn: (r: Redis) => Promise<T>): Promise<T> {
    return this.breaker.run(() => {
      this.calls++;
      return fn(this.redis);
    });
  }

  close(): void {
    this.redis.disconnect(false);
  }
}
