/**
 * Request rate limiting per tenant, opt-in. The service is self-hosted: by default nothing is
 * limited (SERVICE_RATE_LIMIT_RPS=0). An operator who serves several teams can set a default
 * for every tenant (SERVICE_RATE_LIMIT_RPS) and override it per tenant
 * (`rate_limit_rps` in POST /v1/config/tiers). All API keys of a tenant share one token bucket
 * (refilled continuously at `rps`, holding at most twice that), so issuing more keys does not
 * raise a tenant's budget. Checked after authentication, so unknown keys cannot fill the table.
 *
 * Off costs one boolean test per request: buckets exist only for tenants with a limit.
 */
export const MAX_RATE_LIMIT_RPS = 10_000_000;

export interface RateLimitDecision {
  ok: boolean;
  /** Seconds until a token is available (for Retry-After) when not ok. */
  retryAfterS: number;
  /** The tenant's limit (for the message) when not ok. */
  rps: number;
}

interface Bucket {
  rps: number;
  burst: number;
  tokens: number;
  at: number;
}

const ALLOWED: RateLimitDecision = Object.freeze({ ok: true, retryAfterS: 0, rps: 0 });

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  /** False while no tenant has a limit: the router skips the limiter entirely. */
  active = false;

  constructor(
    /** SERVICE_RATE_LIMIT_RPS: the limit of tenants without their own; 0 = none. */
    readonly defaultRps: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Applies a tenant's setting (null = the default). A changed limit starts with a full bucket. */
  configure(tenantId: string, ownRps: number | null): void {
    const rps = ownRps ?? this.defaultRps;
    const existing = this.buckets.get(tenantId);
    if (rps <= 0) this.buckets.delete(tenantId);
    else if (!existing || existing.rps !== rps) this.buckets.set(tenantId, { rps, burst: 2 * rps, tokens: 2 * rps, at: this.now() });
    this.active = this.buckets.size > 0;
  }

  /** The limit in force for a tenant; 0 = none. */
  limitOf(tenantId: string): number {
    return this.buckets.get(tenantId)?.rps ?? 0;
  }

  /** Takes one token from the tenant's bucket. */
  take(tenantId: string): RateLimitDecision {
    const b = this.buckets.get(tenantId);
    if (b === undefined) return ALLOWED;
    const t = this.now();
    b.tokens = Math.min(b.burst, b.tokens + ((t - b.at) / 1000) * b.rps);
    b.at = t;
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return ALLOWED;
    }
    return { ok: false, retryAfterS: Math.max(1, Math.ceil((1 - b.tokens) / b.rps)), rps: b.rps };
  }
}
