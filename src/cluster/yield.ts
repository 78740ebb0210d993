/**
 * One turn of the event loop: long cluster work (building or applying a table of 100,000
 * rules) yields between slices so routes and outcomes waiting on the front thread are served.
 * setImmediate runs after pending I/O callbacks, unlike a resolved promise.
 */
export function yieldTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
