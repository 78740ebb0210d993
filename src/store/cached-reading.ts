/**
 * A reading (e.g. the free space of the store's file system, one statfs() call) taken at most
 * once per `ttlMs` and reused in between. LMDB checks free space before every write (the
 * reserve, store-health.ts); an engine checkpoint writes a record per rule, dozens in each
 * half-millisecond slice of the front thread, and the statfs() calls were a third of that work.
 */
import { performance } from 'node:perf_hooks';

export function cachedReading<T>(read: () => T, ttlMs: number, now: () => number = () => performance.now()): () => T {
  let at = -Infinity;
  let value: T;
  return () => {
    const t = now();
    if (t - at >= ttlMs) {
      value = read();
      at = t;
    }
    return value;
  };
}
