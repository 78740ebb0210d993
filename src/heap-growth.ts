/**
 * How far V8 lets the old generation grow past what survived its last full collection before it
 * collects again. V8 picks the factor itself, up to 4x when collections are quick next to the
 * program's own work, as they are here. For a service that is a poor trade: a burst of writes
 * (100,000 rules created through the API) promotes short-lived objects into the old generation,
 * and the heap grew to ~200 MB around 100 MB of live data; the route traffic that follows
 * allocates almost nothing that survives, so that garbage stayed resident until the process was
 * idle for a while (V8's memory reducer). At 20% a full collection comes once the old generation
 * holds a fifth more than survived the last one: at 100 MB live, every 20 MB promoted.
 *
 * A V8 flag, read at every full collection, so it can be set once the process runs; it holds for
 * every thread of the process (the engine pool, the render and delivery threads). Steady traffic
 * promotes little, so collections stay rare under it (docs/performance-log.md, nineteenth pass).
 */
import { setFlagsFromString } from 'node:v8';

export const HEAP_GROWING_PERCENT = 20;

/** Sets the heap growing factor for the whole process (setting it again changes nothing); first thing in main(), before any thread starts. */
export function limitHeapGrowth(): void {
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}
