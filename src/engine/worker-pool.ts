/**
 * The evaluation pool: piscina threads running worker/entry.js. It is ended only once every
 * thread has loaded its entry module (worker/loaded.ts says why: a thread ended while loading
 * it can abort the whole process), waiting at most `threadLoadWaitMs` for a slow one.
 */
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import { log } from '../log.js';
import type { EvaluateResult, EvaluateTask } from './protocol.js';
import { isThreadLoaded } from './worker/loaded.js';

/** What the scheduler needs of a pool: piscina, or a fake in tests. */
export interface TaskRunner {
  run(task: EvaluateTask): Promise<EvaluateResult>;
  destroy(): Promise<void>;
}

export interface WorkerPoolOptions {
  /** The compiled worker entry. Default: ./worker/entry.js beside this compiled file (dist/src/engine/worker/entry.js). */
  workerFile?: string | URL;
  /** Default max(1, cpus - 1): the front thread keeps a core. */
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
}

/**
 * A thread loads in ~50 ms on an idle machine, many times that on a saturated one. Past this
 * bound (a thread that never reports, which is a bug) the pool is ended anyway: a stop must end.
 */
export const THREAD_LOAD_WAIT_MS = 10_000;

export function createPool(opts: WorkerPoolOptions): TaskRunner {
  const threads = opts.maxThreads ?? Math.max(1, availableParallelism() - 1);
  const file = opts.workerFile ?? new URL('./worker/entry.js', import.meta.url);
  const pool = new Piscina<EvaluateTask, EvaluateResult>({
    filename: file instanceof URL ? file.href : file,
    // Threads stay up between cycles: an early evaluation must not wait for a thread to start,
    // and the workers' view caches survive.
    minThreads: threads,
    maxThreads: threads,
    maxQueue: opts.maxQueue ?? 4096,
    workerData: { warmUp: opts.warmUp === true } satisfies PoolThreadData,
  });
  const loaded = new Set<number>();
  pool.on('message', (m: unknown) => {
    if (isThreadLoaded(m)) loaded.add(m.threadId);
  });
  const waitMs = opts.threadLoadWaitMs ?? THREAD_LOAD_WAIT_MS;
  const loading = () => pool.threads.filter((w) => w.threadId >= 0 && !loaded.has(w.threadId)).length;
  return {
    run: (task) => pool.run(task),
    async destroy() {
      const deadline = Date.now() + waitMs;
      while (loading() > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      if (loading() > 0) log.warn('ending the evaluation pool while a thread is still loading', { threads_loading: loading(), waited_ms: waitMs });
      await pool.destroy();
    },
  };
}
