/** All tenants known to this deployment: from the API keys, and any with stored data. */
import { Tenant, type TierSettings } from './tenant.js';

export class TenantRegistry {
  private readonly tenants = new Map<string, Tenant>();
  /** Tenants that have an API key (or `default` in development mode): reported as active. */
  private readonly configured: Set<string>;

  constructor(
    configuredTenants: string[],
    private readonly defaults: TierSettings,
  ) {
    this.configured = new Set(configuredTenants);
    for (const id of configuredTenants) this.get(id);
  }

  get(id: string): Tenant {
    let t = this.tenants.get(id);
    if (!t) {
      t = new Tenant(id, { ...this.defaults });
      this.tenants.set(id, t);
    }
    return t;
  }

  find(id: string): Tenant | undefined {
    return this.tenants.get(id);
  }

  isActive(id: string): boolean {
    return this.configured.has(id);
  }

  all(): Iterable<Tenant> {
    return this.tenants.values();
  }
}
