/**
 * A pool thread tells the front thread when its entry module has loaded, so that the pool is
 * never ended while a thread is still loading it (worker-pool.ts).
 *
 * Why: piscina's threads load the entry with require(), which on Node >= 20.19 loads an ES
 * module synchronously (require(esm)), and a thread terminated anywhere in that require()
 * aborts the whole process (SIGABRT): "FATAL ERROR: v8::Module::IsGraphAsync must be used on
 * an instantiated module" when it lands before the module is instantiated, "Assertion failed:
 * facade->InstantiateModule(...)" in ModuleWrap::CreateRequiredModuleFacade when it lands after
 * the module was evaluated. On a loaded machine a thread can still be loading when the service
 * already answers, and a SIGTERM then ended the service that way: 2 of 400 such stops, and
 * once in test startup-exclusive (a null exit code instead of 0).
 */
import { isMainThread, parentPort, threadId } from 'node:worker_threads';

export const THREAD_LOADED = 'engine-pool-thread-loaded';

export interface ThreadLoaded {
  type: typeof THREAD_LOADED;
  threadId: number;
}

/**
 * Called from a pool entry module's top level (does nothing on the main thread). It posts in a
 * microtask: that runs only once the require() loading the module has returned, facade and
 * all, whereas the top level itself still runs inside it.
 */
export function announceThreadLoaded(): void {
  if (isMainThread) return;
  queueMicrotask(() => parentPort?.postMessage({ type: THREAD_LOADED, threadId } satisfies ThreadLoaded));
}

export function isThreadLoaded(m: unknown): m is ThreadLoaded {
  return typeof m === 'object' && m !== null && (m as ThreadLoaded).type === THREAD_LOADED && typeof (m as ThreadLoaded).threadId === 'number';
}
