/**
 * The pool's threads run at a lower scheduling priority than the front thread. On a machine
 * with as many busy threads as cores, an evaluation (tens of ms per 1,000 rules at Tier 3)
 * otherwise takes half of the front thread's core for as long as it runs, and every route
 * answered meanwhile waits: with the service on one core, route p99 rose from ~2.5 ms to
 * 8-17 ms whenever a cycle ran. A nice value 5 above the process's gives the thread about a
 * quarter of a contended core (Linux CFS weights 1024 : 335) and all of an idle one.
 *
 * Two kinds of thread (worker-pool.ts): the early evaluations' (failover: an outage judged
 * within milliseconds) at +5, and the cycle's routine tasks at +11, about a twelfth of a
 * contended core (1024 : 87; 11 and not 10, the render thread's default, so that a benchmark
 * can tell them apart by nice value). At a quarter, a cycle's bursts came three in a row,
 * ~0.9 ms of the front thread's core every 4 ms scheduler tick for as long as the cycle ran
 * (docs/performance-log.md, forty-fourth pass): every route in flight waited that long. At a
 * twelfth the same cycle takes longer and holds the front thread about a burst at a time. 10
 * for every task was tried before the threads were split: an early evaluation queued behind a
 * cycle task then took up to 1.8 s under saturated routing; now it runs on its own thread, and
 * a cycle task holding its shard gives it up when it asks (protocol.ts, yieldCell).
 * Linux only: there setpriority() on a thread id renices that thread alone; its id is read
 * from /proc/thread-self. Elsewhere (or if /proc is missing) nothing changes.
 */
import { readdirSync, readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/** Added to the process's nice value for each early-evaluation thread (capped at 19, the lowest priority). */
export const POOL_THREAD_NICE_INCREMENT = 5;
/** Added to the process's nice value for each routine (cycle) thread. */
export const ROUTINE_THREAD_NICE_INCREMENT = 11;

export interface ThreadPriority {
  tid: number;
  nice: number;
}

/** This thread's id (Linux), or null. */
export function currentThreadId(): number | null {
  if (process.platform !== 'linux') return null;
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isInteger(tid) && tid > 0 ? tid : null;
  } catch {
    return null;
  }
}

/**
 * Sets thread `tid`'s nice value `increment` above the front thread's (the process's: its
 * thread id is the process id), capped at 19; returns it. Setting, not adding: a thread lowered
 * twice (by the front thread at its creation, then by itself) ends at the same value. Throws
 * where the system refuses.
 */
function setNiceAboveFront(tid: number, increment: number): number {
  const nice = Math.min(19, getPriority(process.pid) + increment);
  setPriority(tid, nice);
  return nice;
}

/** Lowers the calling thread to `increment` above the front thread (setNiceAboveFront); null where not possible. */
export function lowerThreadPriority(increment = POOL_THREAD_NICE_INCREMENT): ThreadPriority | null {
  const tid = currentThreadId();
  if (tid === null) return null;
  try {
    return { tid, nice: setNiceAboveFront(tid, increment) };
  } catch {
    return null;
  }
}

/** The ids of this process's threads (Linux), or null. */
export function threadIds(): Set<number> | null {
  if (process.platform !== 'linux') return null;
  try {
    return new Set(readdirSync('/proc/self/task').map(Number));
  } catch {
    return null;
  }
}

/**
 * Lowers, from the front thread, the threads started since `before` (threadIds()) to
 * `increment` above the front thread: a worker thread lowers itself only once its modules are
 * loaded, and until then (node's bootstrap, tens of ms of CPU) it competed with the front thread
 * at full weight, in runs of several ms. new Worker() creates its OS thread before it returns.
 */
export function lowerNewThreads(before: Set<number> | null, increment: number): void {
  const now = threadIds();
  if (before === null || now === null || increment <= 0) return;
  for (const tid of now) {
    if (before.has(tid)) continue;
    try {
      setNiceAboveFront(tid, increment);
    } catch {
      // the thread ended meanwhile, or /proc lied: it lowers itself when it runs
    }
  }
}
