/**
 * The front thread's warm-up of the hot endpoints' body decoding (part of SERVICE_JIT_WARM_UP,
 * front-warm-up.ts): each hot endpoint's documented example, and a variant of it, decoded and
 * validated (decodeBody) in turn, before the service listens. Nothing is routed or recorded:
 * decoding is pure.
 *
 * Why: V8 compiles the body decoder (plain-body.ts, and flat-json.ts behind it) for what it
 * has seen. After routes alone it had never seen `true`, `false` or `null` in a body, nor the
 * outcome's fields and validator behind decodeBody, so the first outcome threw the optimised
 * decoder away and V8 compiled it again under load (25-45 ms of compile jobs on its helper
 * threads, at the front thread's priority; docs/performance-log.md, *Twelfth pass*). In service
 * the two bodies are interleaved from the start, so the feedback the warm-up leaves is the one
 * real traffic gives.
 */
import { Buffer } from 'node:buffer';
import { performance } from 'node:perf_hooks';
import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { decodeBody, type Mounted } from './decode-body.js';

/** Decodes per body: enough for the parser and the validators to be optimised (a probe test checks). */
export const BODY_WARM_UP_ROUNDS = 2000;

/**
 * The example, the example with every boolean negated and every value whose schema accepts
 * null set to null (the outcome example's failure becomes a success with no error code), the
 * example with its keys in reverse order, and the example with every number given to 17
 * significant digits: every literal the flat form holds, under the keys real bodies use, keys
 * out of the schema's order (the decoder tries the expected key first; the search past it is
 * code the first such body would otherwise deoptimise), and numbers converted from their text
 * (json-bytes.ts numberEnd), as computed amounts arrive.
 */
export function warmUpBodies(target: Mounted): unknown[] {
  const { ep } = target;
  if (ep.body === undefined) return [];
  const example = ep.doc.requestExample as Record<string, unknown>;
  const props = (ep.body.schema.properties ?? {}) as Record<string, TSchema>;
  const variant: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(example)) {
    variant[k] = typeof v === 'boolean' ? !v : props[k] !== undefined && Value.Check(props[k], null) ? null : v;
  }
  const longNumbers = Object.fromEntries(Object.entries(example).map(([k, v]) => [k, typeof v === 'number' ? v + 1 / 3 : v]));
  return [example, variant, Object.fromEntries(Object.entries(example).reverse()), longNumbers];
}

export interface BodyWarmUpReport {
  ms: number;
  decodes: number;
}

/** Decodes the warm-up bodies of every hot endpoint (those parsed by flat-json.ts), round after round. */
export function warmUpHotBodies(targets: readonly Mounted[], maxBodyBytes: number, rounds = BODY_WARM_UP_ROUNDS): BodyWarmUpReport {
  const t0 = performance.now();
  const work: [Mounted, Buffer][] = [];
  for (const t of targets) {
    if (t.flat === null) continue;
    for (const body of warmUpBodies(t)) work.push([t, Buffer.from(JSON.stringify(body))]);
  }
  for (let r = 0; r < rounds; r++) {
    for (const [target, bytes] of work) decodeBody(target, bytes, maxBodyBytes);
  }
  return { ms: performance.now() - t0, decodes: rounds * work.length };
}
