/**
 * Puts the built-in prototypes back into V8's fast mode once every module is loaded.
 *
 * Why: a `class X extends String` anywhere in the process (ioredis has one: its RESP3
 * VerbatimString, loaded with the cluster code in every mode) makes V8 turn
 * String.prototype into a dictionary-mode object when it becomes X.prototype's prototype.
 * V8 makes a dictionary prototype fast again only when an inline cache looks up a property
 * through it from an object receiver; a string is not an object, so String.prototype stays
 * slow for the life of the process. Every `s.charCodeAt(i)` in optimized code then becomes a
 * generic property load and a generic call instead of one inlined instruction: on the route
 * path (body parser, validation, case folding, trie memo, API-key check) that was about a
 * tenth of the front thread's CPU per request.
 *
 * The cure is the lookup V8 waits for: a property load through each prototype from an object
 * receiver, repeated until the load site has feedback (V8 allocates feedback lazily, after a
 * few calls). A prototype marked fast this way is not turned slow again by a later subclass.
 */

/** The prototypes the hot paths read through. Others are left as V8 keeps them. */
const HOT_PROTOTYPES: readonly object[] = [
  String.prototype,
  Array.prototype,
  Object.prototype,
  Function.prototype,
  Number.prototype,
  Map.prototype,
  Set.prototype,
  Uint8Array.prototype,
  Object.getPrototypeOf(Uint8Array.prototype) as object, // %TypedArray%.prototype
  Buffer.prototype,
];

/** Enough calls for V8 to allocate the load site's feedback and take the slow path through each prototype. */
const LOOKUPS = 64;

function lookUpThrough(receiver: { constructor?: unknown }): unknown {
  return receiver.constructor;
}

/** Marks every hot built-in prototype as one V8 must keep fast (see the module comment); idempotent. */
export function restoreFastPrototypes(): void {
  for (const proto of HOT_PROTOTYPES) {
    const receiver = Object.create(proto) as { constructor?: unknown };
    for (let i = 0; i < LOOKUPS; i++) lookUpThrough(receiver);
  }
}
