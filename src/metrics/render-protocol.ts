/**
 * The messages between the front thread (render-thread.ts) and the metrics render thread
 * (render-worker.ts). Shared memory is posted, not copied; a tenant's rule columns travel only
 * when their version is new to the thread (after a change of the tenant's rules, or to a
 * restarted thread); the compressed bytes come back transferred, not copied.
 */
import type { RuleColumns } from './rule-families.js';

export interface RenderThreadData {
  /** Added to the thread's nice value (Linux), so that the front thread wins a shared core. */
  niceIncrement: number;
  /** Render synthetic tables before 'ready' (render-warm-up.ts). */
  warmUp: boolean;
}

export interface RenderTenantRef {
  tenantId: string;
  version: number;
  predictionEnabled: boolean;
  /** Present when this version of the tenant's rule list is new to the thread. */
  rules?: RuleColumns;
}

export interface RenderRequest {
  type: 'render';
  id: number;
  /** The front thread's part of the text (the prom-client registry), which comes first. */
  front: string;
  /** Every rule segment of the shared tables, when the list grew since the last request. */
  segments?: SharedArrayBuffer[];
  /** Every tenant, in the registry's order. */
  tenants: RenderTenantRef[];
}

export type FromRenderThread =
  /** warmUpMs: how long the JIT warm-up took (render-warm-up.ts), null without one. */
  | { type: 'ready'; nice: number | null; warmUpMs: number | null }
  /** The text as one gzip member (the plain bytes stay on the thread: see Scrape in scrape-cache.ts). */
  | { type: 'rendered'; id: number; gzip: ArrayBuffer; plainBytes: number; renderMs: number }
  | { type: 'failed'; id: number; error: string };
