/**
 * Servers that share one core and take turns being measured (`npm run bench`): a slice runs
 * with every other server of the benchmark stopped (SIGSTOP), and the one it measures is woken
 * (SIGCONT) a moment before it starts.
 *
 * Why: an idle service is not idle. Its front thread wakes ~110 times a second (prom-client's
 * event-loop delay monitor), and the rule set it has just served still has its evaluation
 * cycle, checkpoint slices and garbage collection to run. On the server core that is time taken
 * from whichever server is measured at that moment, most often the bare uWS ceiling, which
 * runs while both services (the measured one and the 10-rule reference) sit idle. Measured on
 * 2026-11-30 (an Intel host, 10 alternated 1 s slices each): bare uWS beside two idle services
 * answered 186,856 req/s with a p99 of 0.76 ms (one slice 22 ms), against 193,504 req/s and
 * 0.64 ms with them stopped, at the same CPU per answer. The services' background work lowered
 * the ceiling, flattering both "route / bare" and "route p99 / bare p99", and stayed under the
 * disturbance threshold (it counted as "others" at 0.02-0.06 of a core).
 *
 * The moment before (SETTLE_MS): a server woken after seconds stopped first runs the timers
 * that fell due meanwhile; that catch-up is not the request path's cost, so it is let pass
 * before wrk starts. Work that falls due during the slice (a cycle, a checkpoint) is the
 * server's own and counts against it, as it would in production.
 *
 * Servers that take turns are started in process groups of their own (startChild's
 * ownProcessGroup says why), so the benchmark stops them itself on a signal
 * (stopChildrenOnSignals).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { processState } from './cpu-usage.js';
import type { Child } from './processes.js';

/** How long a woken server is left to catch up before its slice starts (ms). */
export const SETTLE_MS = Number(process.env.BENCH_SETTLE_MS ?? 250);

export class TurnTaking {
  private readonly stopped = new Set<Child>();

  constructor(private readonly settleMs = SETTLE_MS) {}

  /**
   * Stops every server of `all` but `server` (returning once they are stopped: a signal takes
   * effect when its process is next scheduled), and wakes `server` (then waits settleMs) if it
   * was stopped.
   */
  async only(server: Child, all: Iterable<Child>): Promise<void> {
    const stopping: Child[] = [];
    for (const c of all) {
      if (c === server || this.stopped.has(c) || c.proc.exitCode !== null) continue;
      c.proc.kill('SIGSTOP');
      this.stopped.add(c);
      stopping.push(c);
    }
    for (let waited = 0; waited < 1000 && stopping.some((c) => !isStopped(c)); waited++) await sleep(1);
    if (this.stopped.delete(server)) {
      server.proc.kill('SIGCONT');
      await sleep(this.settleMs);
    }
  }

  /** Wakes `c` if this stopped it (before stopping it for good: a stopped process acts on SIGTERM only once woken). */
  release(c: Child): void {
    if (this.stopped.delete(c)) c.proc.kill('SIGCONT');
  }

  releaseAll(): void {
    for (const c of [...this.stopped]) this.release(c);
  }

  isStopped(c: Child): boolean {
    return this.stopped.has(c);
  }
}

/** Whether the kernel shows `c` stopped (true once it has exited: there is nothing to wait for). */
function isStopped(c: Child): boolean {
  const state = processState(c.proc.pid!);
  return state === null || state === 'T';
}

/** Wakes every child (a stopped process acts on SIGTERM only once woken) and stops it for good. */
export async function wakeAndStop(children: Iterable<Child>): Promise<void> {
  const all = [...children];
  for (const c of all) c.proc.kill('SIGCONT');
  await Promise.all(all.map((c) => c.stop()));
}

const SIGNALS = { SIGINT: 2, SIGTERM: 15, SIGHUP: 1 } as const;

/**
 * On SIGINT, SIGTERM or SIGHUP: wakes and stops every child `children()` lists, then exits as
 * the signal would have (128 + its number). For children in process groups of their own,
 * which the terminal's signals do not reach.
 */
export function stopChildrenOnSignals(children: () => Iterable<Child>): void {
  for (const [name, n] of Object.entries(SIGNALS)) {
    process.once(name, () => void wakeAndStop(children()).finally(() => process.exit(128 + n)));
  }
}
