/**
 * Detaches one throw-away ArrayBuffer, once per thread, before anything is optimised. V8
 * optimises typed-array reads on the assumption that no ArrayBuffer of the thread was ever
 * detached (its "ArrayBufferDetaching" protector); the first detach throws away every piece of
 * optimised code that made it. A thread of this service detaches one sooner or later (a
 * buffer handed over to another thread, lmdb-js's buffers when a second environment opens),
 * and on the front thread that came with the first scrape or cycle under load: the route path
 * and the checkpoint path were compiled again then, on a one-core server in time taken from
 * routes (issue 20; README, Benchmarks, *Seventh pass*). Done first, the code is compiled once,
 * without the assumption.
 */
let done = false;

export function detachOneBuffer(): void {
  if (done) return;
  done = true;
  const b = new ArrayBuffer(8);
  structuredClone(b, { transfer: [b] });
}
