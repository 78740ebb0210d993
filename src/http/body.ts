/**
 * Reading a request body from uWS with a size limit. uWS reuses the chunk buffer after the
 * callback returns, so chunks of a body that spans several are copied; a body that arrives in
 * one chunk (the route path's case) is handed over as a view of uWS's buffer, which `bodyDone`
 * must consume before it returns (the router parses it at once).
 */
import { Buffer } from 'node:buffer'; // not the global: an accessor on globalThis, a getter call per use (see router.ts)
import type { HttpResponse } from '@trufflesuite/uws-js-unofficial';
import { enterUwsCallback, leaveUwsCallback } from './reply.js';

/**
 * Bodies over the limit are still read, and thrown away, up to this many bytes before the
 * 413 is sent: most HTTP clients write the whole body before they read the answer, and one
 * cut off mid-write sees a reset connection (EPIPE) instead of the 413. Beyond it (or with
 * a larger Content-Length) the 413 is sent at once and the connection closed.
 */
export const DISCARD_CAP_BYTES = 32 * 1024 * 1024;

/**
 * Who gets the body. `bodyPartial` is called once, when the first chunk arrives and more are
 * to come; `bodyDone` gets the body, or null once an oversized body has been read to its end
 * (or past DISCARD_CAP_BYTES). An object with methods rather than callbacks, so that the hot
 * path's one per-request object can be its own sink (hot-path.ts).
 */
export interface BodySink {
  bodyPartial(): void;
  bodyDone(body: Buffer | null): void;
}

/** A body being read; `oversized` turns true once it has passed the limit (the rest is discarded). */
export class BodyReader {
  oversized = false;
  /** uWS has handed over the request's last chunk: it calls data() no more for this request. */
  lastSeen = false;
  private chunks: Buffer[] | null = null; // only for a body in several chunks
  private size = 0;
  private finished = false;
  private partial = false;

  constructor(
    private readonly limit: number,
    private readonly sink: BodySink,
  ) {}

  /** Ready for another request's body (the hot path reuses its readers: hot-path.ts). */
  reset(): void {
    this.oversized = false;
    this.lastSeen = false;
    this.chunks = null;
    this.size = 0;
    this.finished = false;
    this.partial = false;
  }

  data(chunk: ArrayBuffer, isLast: boolean): void {
    if (isLast) this.lastSeen = true;
    if (this.finished) return;
    this.size += chunk.byteLength;
    if (!this.partial && !isLast) {
      this.partial = true;
      this.sink.bodyPartial();
    }
    if (!this.oversized && this.size > this.limit) {
      this.oversized = true;
      this.chunks = null; // what was kept is of no use any more
    }
    if (this.oversized) {
      if (isLast || this.size > DISCARD_CAP_BYTES) {
        this.finished = true;
        deliver(this.sink, null);
      }
      return;
    }
    if (isLast && this.chunks === null) {
      this.finished = true;
      deliver(this.sink, Buffer.from(chunk));
      return;
    }
    (this.chunks ??= []).push(Buffer.from(new Uint8Array(chunk)));
    if (isLast) {
      this.finished = true;
      deliver(this.sink, this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks, this.size));
    }
  }
}

/** Reads the request's body into `sink` (see BodySink), within `limit` bytes. */
export function readBody(res: HttpResponse, limit: number, sink: BodySink): BodyReader {
  const reader = new BodyReader(limit, sink);
  res.onData((chunk, isLast) => reader.data(chunk, isLast));
  return reader;
}

/** Hands the body over inside onData: uWS has the socket corked, so the reply is written without cork(). */
function deliver(sink: BodySink, body: Buffer | null): void {
  enterUwsCallback();
  try {
    sink.bodyDone(body);
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
