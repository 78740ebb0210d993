/**
 * Reading a request body from uWS with a size limit. uWS reuses the chunk buffer after the
 * callback returns, so every chunk is copied.
 */
import type { HttpResponse } from '@trufflesuite/uws-js-unofficial';

export type BodyResult = { ok: true; body: Buffer } | { ok: false; tooLarge: true };

/** `onPartial` is called once, when the first chunk arrives and more are to come. */
export function readBody(res: HttpResponse, limit: number, onPartial: () => void, done: (r: BodyResult) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let finished = false;
  res.onData((chunk, isLast) => {
    if (finished) return;
    size += chunk.byteLength;
    if (size > limit) {
      finished = true;
      done({ ok: false, tooLarge: true });
      return;
    }
    chunks.push(Buffer.from(new Uint8Array(chunk)));
    if (!isLast && chunks.length === 1) onPartial();
    if (isLast) {
      finished = true;
      done({ ok: true, body: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size) });
    }
  });
}
