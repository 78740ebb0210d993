/**
 * Turns of the event loop for the front thread's background work: checkpoint writing, the
 * registry part of a scrape, building and applying a cluster table. Each of them works in
 * slices and calls yieldTurn() between two, so that routes and outcomes waiting on the front
 * thread are served (setImmediate runs after pending I/O callbacks, unlike a resolved promise).
 *
 * The turns are shared: one waiter resumes per turn of the loop, in the order they asked. When
 * each waited on a setImmediate of its own, every piece of background work running at that
 * moment did a slice in the same turn (a cycle's checkpoints of five tenants, a scrape's
 * registry text), and the routes held meanwhile waited for all of those slices back to back.
 */
const waiting: (() => void)[] = [];
let scheduled = false;

function resumeNext(): void {
  scheduled = false;
  const resume = waiting.shift();
  if (waiting.length > 0) schedule();
  resume?.();
}

function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  setImmediate(resumeNext);
}

/** Resolves at a later turn of the event loop, once every slice that asked before has had its turn. */
export function yieldTurn(): Promise<void> {
  return new Promise((resolve) => {
    waiting.push(resolve);
    schedule();
  });
}

/** Background slices waiting for their turn (tests). */
export function turnsWaiting(): number {
  return waiting.length;
}
