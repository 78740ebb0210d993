/**
 * Young-generation collection done inside the pause when the process has one CPU.
 *
 * By default V8 hands parts of every scavenge to its helper threads: the parallel scavenge
 * (the main thread waits for the helpers' share) and the sweep of the dead ArrayBuffers
 * afterwards (uWS makes one per request body, ~20,000 per scavenge at saturation). With one
 * CPU, as under `taskset -c 1` or a one-CPU affinity mask, a helper can only run by taking the
 * CPU from the front thread: at ~140,000 routes a second the front thread was off the CPU 29
 * times in 3 s for 0.3-1.9 ms at the scavenges' cadence (`perf sched`), each time holding every
 * request in flight, and the threads' hand-offs cost CPU of their own. Done in the pause
 * instead (compare-builds, 7 rounds, 1,000 rules; docs/performance-log.md, thirty-first pass):
 * with the flags given to node, route CPU per request 0.97× (lower in 7 of 7), p99 0.93×; as
 * built, against the build before, route 1.00× and 0.98× in two runs (0.959-1.026 by round),
 * p99 0.96× and 0.97×, outcome 1.00×, p99 0.96×. A small gain.
 *
 * With more than one CPU the helpers run beside the front thread and shorten its pauses, so
 * V8's defaults stay. os.availableParallelism() follows the affinity mask, not a cgroup's CPU
 * quota: a container limited by quota keeps the defaults.
 *
 * V8 flags read at every scavenge, so they can be set once the process runs; they hold for
 * every thread of the process (the engine pool, the render and delivery threads).
 */
import { availableParallelism } from 'node:os';
import { setFlagsFromString } from 'node:v8';

export const ONE_CPU_GC_FLAGS: readonly string[] = ['--no-parallel-scavenge', '--no-concurrent-array-buffer-sweeping'];

/** The flags for a process that may run on `cpus` CPUs (none above one). */
export function gcFlagsFor(cpus: number): readonly string[] {
  return cpus <= 1 ? ONE_CPU_GC_FLAGS : [];
}

/** Sets them for this process (first thing in main(), before any thread starts); returns what it set, for the start-up log. */
export function keepScavengesOnOneCpu(cpus = availableParallelism()): readonly string[] {
  const flags = gcFlagsFor(cpus);
  for (const f of flags) setFlagsFromString(f);
  return flags;
}
