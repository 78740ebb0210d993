/**
 * The front thread's part of the JIT warm-up (SERVICE_JIT_WARM_UP), run once at start, after
 * every module is loaded and before the service listens: the code the front thread runs only
 * at cycles (engine checkpoints) and at scrapes (the registry part of /metrics/), and the hot
 * endpoints' body decoding for both bodies (http/body-warm-up.ts), run enough times on
 * simulated or read-only work to be optimised before traffic. The pool threads and
 * the metrics render thread warm their own (engine/worker/warm-up.ts, metrics/render-warm-up.ts).
 * A failure is logged and the service starts anyway: the first cycles and scrapes compile then.
 */
import type { Registry } from 'prom-client';
import { warmUpCheckpoints } from './engine/checkpoint-warm-up.js';
import { warmUpHotBodies } from './http/body-warm-up.js';
import type { Mounted } from './http/decode-body.js';
import { log } from './log.js';
import { warmUpRegistryText } from './metrics/registry-warm-up.js';
import type { SharedTables } from './shm/tables.js';
import type { Store } from './store/store.js';
import type { TierSettings } from './tenants/tenant.js';

export interface FrontWarmUpOptions {
  registry: Registry;
  /** The service's shared tables: the simulated rules take a few of their slots, freed after. */
  tables: SharedTables;
  /** The tier settings of the service's tenants: the simulated tenant's are the same. */
  settings: TierSettings;
  /** The service's store when it is the embedded LMDB one (the path warmed); null in cluster mode. */
  embeddedStore: Store | null;
  /** The router's hot endpoints (Router.hotTargets) and its body limit: their bodies' decoding is warmed. */
  hotTargets: readonly Mounted[];
  maxBodyBytes: number;
}

export async function warmUpFrontThread(o: FrontWarmUpOptions): Promise<void> {
  const fields: Record<string, number> = {};
  try {
    fields.registry_ms = Math.round(await warmUpRegistryText(o.registry));
    const bodies = warmUpHotBodies(o.hotTargets, o.maxBodyBytes);
    fields.body_decode_ms = Math.round(bodies.ms);
    fields.body_decodes = bodies.decodes;
    if (o.embeddedStore !== null) {
      const r = await warmUpCheckpoints(o.embeddedStore, o.tables, o.settings);
      fields.checkpoint_ms = Math.round(r.ms);
      fields.checkpoint_writes = r.writes;
    }
    log.info('front thread warmed up', fields);
  } catch (e) {
    log.warn('front thread warm-up failed; the first cycles, scrapes and outcomes compile instead', { ...fields, error: String(e) });
  }
}
