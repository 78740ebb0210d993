/**
 * A pool thread tells the front thread when its entry module has loaded, so that the pool is
 * never ended while a thread is still loading it (worker-pool.ts).
 *
 * Why: piscina's threads load the entry with require(), which on Node >= 20.19 loads an ES
 * module synchronously (require(esm)). A thread terminated during that load aborts the whole
 * process: "FATAL ERROR: v8::Module::IsGraphAsync must be used on an instantiated module"
 * (Node's ModuleWrap::InstantiateSync goes on after the termination), SIGABRT. On a loaded
 * machine a thread can still be loading when the service already answers, and a SIGTERM then
 * ended the service that way: 2 of 400 such stops, and once in test startup-exclusive (a null
 * exit code instead of 0).
 */
import { isMainThread, parentPort, threadId } from 'node:worker_threads';

export const THREAD_LOADED = 'engine-pool-thread-loaded';

export interface ThreadLoaded {
  type: typeof THREAD_LOADED;
  threadId: number;
}

/** Called at the end of a pool entry module's top level; does nothing on the main thread. */
export function announceThreadLoaded(): void {
  if (isMainThread) return;
  parentPort?.postMessage({ type: THREAD_LOADED, threadId } satisfies ThreadLoaded);
}

export function isThreadLoaded(m: unknown): m is ThreadLoaded {
  return typeof m === 'object' && m !== null && (m as ThreadLoaded).type === THREAD_LOADED && typeof (m as ThreadLoaded).threadId === 'number';
}
