/**
 * Detaches one throw-away ArrayBuffer, once per thread, before anything is optimised. V8
 * optimises typed-array reads on the assumption that no ArrayBuffer of the thread was ever
 * detached (its "ArrayBufferDetaching" protector); the first detach throws away every piece of
 * optimised code that made it. Each thread of this service detaches one sooner or later: the
 * render thread when it hands a rendering back, the front thread when lmdb-js makes its first
 * store write (a rule created, or the first checkpoints). On the front thread that threw away
 * the checkpoint path the start-up warm-up had just compiled (front-warm-up.ts), which was then
 * compiled again at the first cycles under load, on a one-core server in time taken from
 * routes (issue 20; docs/performance-log.md, *Seventh pass*). Done first, code is compiled once,
 * without the assumption.
 */
let done = false;

export function detachOneBuffer(): void {
  if (done) return;
  done = true;
  const b = new ArrayBuffer(8);
  structuredClone(b, { transfer: [b] });
}
