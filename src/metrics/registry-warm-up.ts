/**
 * The front thread's JIT warm-up of /metrics/'s registry part (registry-text.ts), run once at
 * start (SERVICE_JIT_WARM_UP): the registry is rendered a few dozen times and the text thrown
 * away. Why: prom-client's formatting runs once per metric per scrape, so V8 found it hot only
 * after a few dozen scrapes under load and compiled it then (its getMetricsAsString alone took
 * a 33 ms compile job on V8's helper threads, which on a one-core server took that time from
 * routes; issue 20, docs/performance-log.md, *Seventh pass*). Reading the registry changes nothing
 * a scrape would not: its collectors only read (the event-loop lag's histogram restarts, as
 * after every scrape).
 */
import { performance } from 'node:perf_hooks';
import type { Registry } from 'prom-client';
import { registryText } from './registry-text.js';

/** Renderings: enough for prom-client's per-metric formatting to be optimised (~50 metrics each). */
export const REGISTRY_WARM_UP_RENDERINGS = 40;

/** Renders the registry's text REGISTRY_WARM_UP_RENDERINGS times; returns the time it took, ms. */
export async function warmUpRegistryText(registry: Registry): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < REGISTRY_WARM_UP_RENDERINGS; i++) await registryText(registry);
  return performance.now() - t0;
}
