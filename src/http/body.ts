/**
 * Reading a request body from uWS with a size limit. uWS reuses the chunk buffer after the
 * callback returns, so chunks of a body that spans several are copied; a body that arrives in
 * one chunk (the route path's case) is handed over as a view of uWS's buffer, which `done`
 * must consume before it returns (the router parses it at once).
 */
import type { HttpResponse } from '@trufflesuite/uws-js-unofficial';
import { enterUwsCallback, leaveUwsCallback } from './reply.js';

export type BodyResult = { ok: true; body: Buffer } | { ok: false; tooLarge: true };

/**
 * Bodies over the limit are still read, and thrown away, up to this many bytes before the
 * 413 is sent: most HTTP clients write the whole body before they read the answer, and one
 * cut off mid-write sees a reset connection (EPIPE) instead of the 413. Beyond it (or with
 * a larger Content-Length) the 413 is sent at once and the connection closed.
 */
export const DISCARD_CAP_BYTES = 32 * 1024 * 1024;

const TOO_LARGE: BodyResult = Object.freeze({ ok: false, tooLarge: true });

/** A body being read; `oversized` turns true once it has passed the limit (the rest is discarded). */
export interface BodyReader {
  oversized: boolean;
}

/**
 * `onPartial` is called once, when the first chunk arrives and more are to come. `done` gets
 * the body, or `tooLarge` once an oversized body has been read to its end (or past
 * DISCARD_CAP_BYTES).
 */
export function readBody(res: HttpResponse, limit: number, onPartial: () => void, done: (r: BodyResult) => void): BodyReader {
  const reader: BodyReader = { oversized: false };
  const chunks: Buffer[] = [];
  let size = 0;
  let finished = false;
  let partial = false;
  res.onData((chunk, isLast) => {
    if (finished) return;
    size += chunk.byteLength;
    if (!partial && !isLast) {
      partial = true;
      onPartial();
    }
    if (!reader.oversized && size > limit) {
      reader.oversized = true;
      chunks.length = 0; // what was kept is of no use any more
    }
    if (reader.oversized) {
      if (isLast || size > DISCARD_CAP_BYTES) {
        finished = true;
        done(TOO_LARGE);
      }
      return;
    }
    if (isLast && chunks.length === 0) {
      finished = true;
      deliver(done, { ok: true, body: Buffer.from(chunk) });
      return;
    }
    chunks.push(Buffer.from(new Uint8Array(chunk)));
    if (isLast) {
      finished = true;
      deliver(done, { ok: true, body: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size) });
    }
  });
  return reader;
}

/** Calls `done` inside onData: uWS has the socket corked, so the reply is written without cork(). */
function deliver(done: (r: BodyResult) => void, r: BodyResult): void {
  enterUwsCallback();
  try {
    done(r);
  } finally {
    leaveUwsCallback();
  }
}

/** Deepest array/object nesting any accepted body may have (the deepest schema needs 3). */
export const MAX_JSON_DEPTH = 32;

/**
 * Whether the JSON text nests arrays/objects deeper than `max`. A linear byte scan that skips
 * strings, run before JSON.parse: validators and hashing (e.g. `uniqueItems`) recurse, and a
 * deep enough body would exhaust their stack.
 */
export function nestedDeeperThan(body: Buffer, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped byte
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}
