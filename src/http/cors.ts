/**
 * CORS per SERVICE_CORS_ORIGINS: off when unset; `*` allows any origin; otherwise an exact
 * list. Allowed origins are echoed (with Vary: Origin) so credentials-free browser clients
 * and caches both behave.
 */
export class CorsPolicy {
  private readonly any: boolean;
  private readonly origins: Set<string>;
  constructor(origins: string[]) {
    this.any = origins.includes('*');
    this.origins = new Set(origins.map((o) => o.toLowerCase()));
  }
  get enabled(): boolean {
    return this.any || this.origins.size > 0;
  }
  /** The value for Access-Control-Allow-Origin, or null when the origin is not allowed. */
  allow(origin: string): string | null {
    if (!origin) return null;
    if (this.any) return '*';
    return this.origins.has(origin.toLowerCase()) ? origin : null;
  }
  static readonly preflightHeaders = {
    'Access-Control-Allow-Headers': 'Content-Type, X-API-Key',
    'Access-Control-Max-Age': '600',
  };
}
