/**
 * Request smuggling guard: two Content-Length headers with different values. uWebSockets.js
 * frames the body by the first; a proxy in front that uses the last would see a different
 * request boundary, so the bytes after the shorter body could be taken as a second request
 * by one side and not the other (RFC 9112 §6.3: such a message must be rejected).
 *
 * The connection is closed at once, without a 400: uWS has already read the bytes that follow
 * (the smuggled request) and parses them right after this handler returns, in the same
 * callback, even when the 400 asks to close the connection; only a close from inside the
 * handler stops it, and a close discards what the handler wrote (uWS holds it corked). A
 * closed connection is the safe answer; a 400 followed by a served smuggled request is not.
 *
 * One pass over the headers with a module-level visitor (no closure per request), before any
 * answer on every path and for every method (router.ts): uWS reads a body by Content-Length
 * whatever the method, and a 404 or 405 answered first was followed by the smuggled request.
 * The pass also keeps the first Content-Length and X-API-Key values (what getHeader would
 * return) for the hot path, which then needs no getHeader call: the pass has turned every
 * header into strings already.
 */
import type { HttpRequest } from '@trufflesuite/uws-js-unofficial';

let seen = 0;
let first = '';
let conflict = false;
let apiKey = '';
let apiKeySeen = false;

function visit(name: string, value: string): void {
  if (name === 'x-api-key') {
    if (!apiKeySeen) apiKey = value; // the first, as getHeader: an empty first one is not replaced
    apiKeySeen = true;
    return;
  }
  if (name !== 'content-length') return;
  if (seen++ === 0) first = value;
  else if (value.trim() !== first.trim()) conflict = true;
}

/** True when the request carries Content-Length more than once with different values. */
export function conflictingContentLength(req: HttpRequest): boolean {
  seen = 0;
  first = '';
  conflict = false;
  apiKey = '';
  apiKeySeen = false;
  req.forEach(visit);
  return conflict;
}

/** After conflictingContentLength(req): the request's first Content-Length and X-API-Key values ('' when absent). */
export function scannedContentLength(): string {
  return first;
}

export function scannedApiKey(): string {
  return apiKey;
}

/**
 * The number a Content-Length value stands for, on both paths (the hot path's limit check and
 * the generic path's discard cap): plain digits read here ('' is 0), anything else as Number()
 * reads it. Number() of a string is V8's generic conversion, ~50 ns per route request in the
 * profile; the digits uWS frames a body by take a few.
 */
export function contentLengthValue(s: string): number {
  if (s.length > 15) return Number(s); // past 15 digits the sum below could lose precision
  let v = 0;
  for (let i = 0; i < s.length; i++) {
    const d = s.charCodeAt(i) - 0x30;
    if (d < 0 || d > 9) return Number(s);
    v = v * 10 + d;
  }
  return v;
}
