/**
 * The prom-client registry's part of /metrics/ (requests, engine, webhooks, cluster, process:
 * a few hundred lines), written exactly as Registry.metrics() writes it, but one metric at a
 * time with a turn of the event loop whenever SLICE_MS of front-thread work has been done:
 * Registry.metrics() collects and formats every metric in one piece, 2-3 ms at saturation,
 * which every route arriving meanwhile waited for, once per scrape.
 */
import type { Registry } from 'prom-client';
import { performance } from 'node:perf_hooks';
import { yieldTurn } from '../front-turns.js';

/** Front-thread work between two turns of the event loop, ms (one metric may take longer). */
export const SLICE_MS = 0.5;

export async function registryText(registry: Registry, sliceMs = SLICE_MS): Promise<string> {
  const parts: string[] = [];
  let start = performance.now();
  for (const metric of registry.getMetricsAsArray()) {
    parts.push(await registry.getSingleMetricAsString(metric.name));
    if (performance.now() - start >= sliceMs) {
      await yieldTurn();
      start = performance.now();
    }
  }
  // Registry.metrics(): the metrics separated by a blank line, then one newline.
  return `${parts.join('\n\n')}\n`;
}
