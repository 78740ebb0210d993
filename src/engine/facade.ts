/** What the HTTP layer needs from the engine (health evaluation and the tiers); EngineService implements it. */
import type { RecordedOutcome } from '../routing/outcome.js';
import type { Tenant } from '../tenants/tenant.js';

export interface EngineFacade {
  running(): boolean;
  /** Called after each recorded outcome; may request an early evaluation. */
  outcomeRecorded(tenant: Tenant, outcome: RecordedOutcome, nowMs: number): void;
}
