/**
 * Per-API-key rate limiting: a token bucket per key (refilled continuously at `rps`, holding
 * at most `burst`). Keeps one runaway client from starving the other tenants' checkouts.
 * Checked after authentication, so unknown keys cannot fill the table.
 */
export interface RateLimitDecision {
  ok: boolean;
  /** Seconds until a token is available (for Retry-After) when not ok. */
  retryAfterS: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

export class RateLimiter {
  private readonly buckets = new WeakMap<object, Bucket>();
  private readonly allowed: RateLimitDecision = { ok: true, retryAfterS: 0 };

  constructor(
    readonly rps: number,
    readonly burst: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Takes one token from `key`'s bucket (`key` is the key's grant object). */
  take(key: object): RateLimitDecision {
    const t = this.now();
    let b = this.buckets.get(key);
    if (!b) {
      b = { tokens: this.burst, at: t };
      this.buckets.set(key, b);
    } else {
      b.tokens = Math.min(this.burst, b.tokens + ((t - b.at) / 1000) * this.rps);
      b.at = t;
    }
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return this.allowed;
    }
    return { ok: false, retryAfterS: Math.max(1, Math.ceil((1 - b.tokens) / this.rps)) };
  }
}
