/**
 * Large responses with back-pressure. A body built in one piece on the front thread (24 MB
 * of rules, 62 MB of health) blocks every tenant's routing while it is built, and a slow
 * reader keeps all of it in memory. Here the body is an iterator of string chunks:
 *
 *   pump ─► next chunk ─► res.write ─┬─ accepted: go on, until SLICE_BYTES were written in
 *     ▲                               │  this turn, then yield the loop (setImmediate)
 *     │                               └─ refused (socket buffer full): stop; uWS keeps that
 *     └──────────── res.onWritable ◄──────  one chunk and calls onWritable once drained
 *
 * so at most one chunk per slow reader waits in memory, and no turn of the event loop spends
 * more than SLICE_BYTES of serialization on one response. The body is sent chunked
 * (Transfer-Encoding: chunked): its length is not known in advance.
 */
import type { HttpResponse } from '@trufflesuite/uws-js-unofficial';
import { writeHead, type ResponseState } from './reply.js';

/** Bytes written for one response per turn of the event loop before yielding. */
export const SLICE_BYTES = 256 * 1024;
/** Target size of one produced chunk. */
export const CHUNK_BYTES = 32 * 1024;

export function sendStream(
  res: HttpResponse,
  state: ResponseState,
  status: number,
  contentType: string,
  headers: Record<string, string> | undefined,
  chunks: Iterator<string | Buffer>,
  onEnd: () => void,
): void {
  if (state.aborted || state.done) return;
  state.done = true;
  let waitingForDrain = false;
  let finished = false;

  const finish = (): void => {
    if (finished) return;
    finished = true;
    onEnd();
  };
  const fail = (): void => {
    // A chunk producer that throws midway cannot turn into an error status any more (the
    // status line is out): the connection is closed so the client sees a truncated body.
    finished = true;
    if (!state.aborted) res.close();
    onEnd();
  };

  const pump = (): void => {
    if (state.aborted || finished) return finish();
    let written = 0;
    for (;;) {
      let n: IteratorResult<string | Buffer>;
      try {
        n = chunks.next();
      } catch {
        return fail();
      }
      if (n.done) {
        res.end();
        return finish();
      }
      written += n.value.length;
      if (!res.write(n.value)) {
        waitingForDrain = true; // uWS holds this chunk; onWritable resumes
        return;
      }
      if (written >= SLICE_BYTES) {
        setImmediate(() => {
          if (state.aborted) return finish();
          res.cork(pump);
        });
        return;
      }
    }
  };

  res.onWritable(() => {
    if (!waitingForDrain) return true;
    waitingForDrain = false;
    pump();
    return true;
  });
  res.cork(() => {
    writeHead(res, state, status, contentType, headers);
    pump();
  });
}

/** Groups small JSON pieces into chunks of about CHUNK_BYTES. */
export function* chunked(pieces: Iterable<string>): Generator<string> {
  let buf = '';
  for (const p of pieces) {
    buf += p;
    if (buf.length >= CHUNK_BYTES) {
      yield buf;
      buf = '';
    }
  }
  if (buf.length > 0) yield buf;
}

/** `[a,b,c]` from JSON-serialized items, in chunks. */
export function jsonArrayChunks<T>(items: Iterable<T>, serialize: (item: T) => string): Iterator<string> {
  return chunked(
    (function* () {
      yield '[';
      let first = true;
      for (const it of items) {
        yield first ? serialize(it) : ',' + serialize(it);
        first = false;
      }
      yield ']';
    })(),
  );
}
