/**
 * The evaluation pool: piscina threads running worker/entry.js, in two sets. The early
 * evaluations (an outage on the outcome path, slow-start follow-ups) and readiness pings run
 * on threads of their own, at the usual pool priority; the cycle's routine tasks run on
 * threads at a lower one (worker/priority.ts says why). So an early evaluation never waits in a
 * queue behind a cycle's tasks, and the cycle's long walks take the shared core in smaller
 * shares. The pool is ended only once every thread has loaded its entry module
 * (worker/loaded.ts says why: a thread ended while loading it can abort the whole process),
 * waiting at most `threadLoadWaitMs` for a slow one.
 */
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { log } from '../log.js';
import type { EvaluateResult, EvaluateTask } from './protocol.js';
import { isThreadLoaded } from './worker/loaded.js';
import { POOL_THREAD_NICE_INCREMENT, ROUTINE_THREAD_NICE_INCREMENT } from './worker/priority.js';

/** What the scheduler needs of a pool: piscina, or a fake in tests. */
export interface TaskRunner {
  /** Runs `task` on a routine thread when it is a cycle task (it carries a yieldCell), else on an early-evaluation thread. */
  run(task: EvaluateTask): Promise<EvaluateResult>;
  destroy(): Promise<void>;
  /**
   * How many routine tasks can run at once (the routine threads): the scheduler hands the
   * cycle's tasks over no faster, so that none waits in the pool's queue, where an early
   * evaluation of its shard could not take it back. Absent: all at once (test runners).
   */
  routineThreads?: number;
}

export interface WorkerPoolOptions {
  /** The compiled worker entry. Default: ./worker/entry.js beside this compiled file (dist/src/engine/worker/entry.js). */
  workerFile?: string | URL;
  /** Threads of each set (early, routine). Default max(1, cpus - 1): the front thread keeps a core. */
  maxThreads?: number;
  /** Bound on tasks waiting in the pool. Default 4096. */
  maxQueue?: number;
  /** How long destroy() waits for threads still loading. Default THREAD_LOAD_WAIT_MS. */
  threadLoadWaitMs?: number;
  /** Each thread warms its JIT while it loads (worker/warm-up.ts). Default false (tests); the service passes SERVICE_JIT_WARM_UP. */
  warmUp?: boolean;
}

/** What a pool thread gets as piscina's workerData. */
export interface PoolThreadData {
  warmUp: boolean;
  /** Added to the process's nice value for this thread (worker/priority.ts). */
  niceIncrement: number;
}

/**
 * A thread loads in ~50 ms on an idle machine, many times that on a saturated one. Past this
 * bound (a thread that never reports, which is a bug) the pool is ended anyway: a stop must end.
 */
export const THREAD_LOAD_WAIT_MS = 10_000;

export function createPool(opts: WorkerPoolOptions): TaskRunner {
  const threads = opts.maxThreads ?? Math.max(1, availableParallelism() - 1);
  const file = opts.workerFile ?? new URL('./worker/entry.js', import.meta.url);
  const loaded = new Set<number>();
  const threadSet = (niceIncrement: number): Piscina<EvaluateTask, EvaluateResult> => {
    const pool = new Piscina<EvaluateTask, EvaluateResult>({
      filename: file instanceof URL ? file.href : file,
      // Threads stay up between cycles: an early evaluation must not wait for a thread to start,
      // and the workers' view caches survive.
      minThreads: threads,
      maxThreads: threads,
      maxQueue: opts.maxQueue ?? 4096,
      workerData: { warmUp: opts.warmUp === true, niceIncrement } satisfies PoolThreadData,
    });
    pool.on('message', (m: unknown) => {
      if (isThreadLoaded(m)) loaded.add(m.threadId);
    });
    return pool;
  };
  const early = threadSet(POOL_THREAD_NICE_INCREMENT);
  const routine = threadSet(ROUTINE_THREAD_NICE_INCREMENT);
  const waitMs = opts.threadLoadWaitMs ?? THREAD_LOAD_WAIT_MS;
  const loading = () => [...early.threads, ...routine.threads].filter((w) => w.threadId >= 0 && !loaded.has(w.threadId)).length;
  return {
    run: (task) => (task.yieldCell !== undefined ? routine : early).run(task),
    routineThreads: threads,
    async destroy() {
      const deadline = Date.now() + waitMs;
      while (loading() > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      if (loading() > 0) log.warn('ending the evaluation pool while a thread is still loading', { threads_loading: loading(), waited_ms: waitMs });
      await Promise.all([early.destroy(), routine.destroy()]);
    },
  };
}
