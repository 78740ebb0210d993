/**
 * The process-wide policy for errors nothing caught. One payment tenant's bad luck (a full
 * disk under an un-awaited write, a library that rejects a promise nobody holds) must not
 * stop routing for everyone, so:
 * - an unhandled promise rejection is logged and counted, and the process keeps serving: a
 *   rejection nobody awaited has, by construction, no caller whose state it left half-done;
 * - an uncaught exception is logged and counted and the process keeps serving too, because
 *   every piece of shared state here (tries, shared tables, caches) is changed synchronously
 *   and completely inside one callback; but a process that keeps throwing (more than
 *   UNCAUGHT_BURST in UNCAUGHT_WINDOW_MS) is broken, not unlucky: it exits (code 70) so a
 *   supervisor restarts it on its durable store.
 */
import { log } from './log.js';

export const UNCAUGHT_BURST = 20;
export const UNCAUGHT_WINDOW_MS = 60_000;

export const unhandledCounts = { rejections: 0, exceptions: 0 };

let installed = false;

export function installProcessGuard(): void {
  if (installed) return;
  installed = true;
  let windowStart = 0;
  let inWindow = 0;
  process.on('unhandledRejection', (reason) => {
    unhandledCounts.rejections++;
    // lmdb-js rejects an internal batch promise besides the writer's own for a failed commit;
    // the writer got (and answered) the error and the store logged it: no stack needed here.
    if ((reason as { commitError?: unknown })?.commitError !== undefined) {
      log.debug('failed store commit also rejected an internal lmdb-js promise', { err: String((reason as Error).message) });
      return;
    }
    log.error('unhandled promise rejection; still serving', { err: describe(reason) });
  });
  process.on('uncaughtException', (err) => {
    unhandledCounts.exceptions++;
    const now = Date.now();
    if (now - windowStart > UNCAUGHT_WINDOW_MS) {
      windowStart = now;
      inWindow = 0;
    }
    inWindow++;
    if (inWindow > UNCAUGHT_BURST) {
      log.error('uncaught exceptions keep coming; exiting so a supervisor restarts the service', { err: describe(err), in_last_minute: inWindow });
      process.exit(70);
    }
    log.error('uncaught exception; still serving', { err: describe(err) });
  });
}

function describe(e: unknown): string {
  return String((e as Error)?.stack ?? e);
}
