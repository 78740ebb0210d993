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
 * One pass over the headers with a module-level visitor (no closure per request); only run
 * for methods that carry a body. The pass also finds, for the hot path, the first Content-Length
 * (what getHeader would return, and what uWS frames the body by) and the grant of the first
 * X-API-Key, so that the hot path needs no getHeader call: the pass has turned every header into
 * strings already.
 *
 * The visitor keeps numbers and long-lived objects, not the header strings: a string uWS has
 * just made is in V8's young generation, and storing it into a module variable (old) takes the
 * write barrier's slow path, ~100 instructions a store. So the first Content-Length is kept as
 * its value and length when it is plain digits (its text is then fully known: the same digits,
 * with leading zeros counted by the length), and only any other spelling keeps its text; the
 * X-API-Key is looked up at once and its grant (made at start) kept. A name is compared by its
 * length first: a fresh string against a literal is a call to V8's string compare, most names
 * differ in length.
 */
import type { HttpRequest } from '@trufflesuite/uws-js-unofficial';
import type { ApiKeyTable, KeyGrant } from './api-keys.js';

const NOT_DIGITS = -1;
const MAX_PLAIN_DIGITS = 15; // past 15 digits two different spellings could read as one number

let seen = 0;
/** The first Content-Length as a number when it is plain digits (NOT_DIGITS otherwise) … */
let firstDigits = 0;
/** … its length in characters … */
let firstLength = 0;
/** … and its text only when it is not plain digits ('' otherwise: see the module comment). */
let firstText = '';
let conflict = false;
let keys: ApiKeyTable | null = null;
let grant: KeyGrant | null = null;
let keySeen = false;

/** s's value when it is 0 to MAX_PLAIN_DIGITS ASCII digits ('' is 0), else NOT_DIGITS. */
function plainDigits(s: string): number {
  if (s.length > MAX_PLAIN_DIGITS) return NOT_DIGITS;
  let v = 0;
  for (let i = 0; i < s.length; i++) {
    const d = s.charCodeAt(i) - 0x30;
    if (d < 0 || d > 9) return NOT_DIGITS;
    v = v * 10 + d;
  }
  return v;
}

/** Whether s, trimmed, is the first Content-Length's text, trimmed (the test for a conflict). */
function sameAsFirst(s: string): boolean {
  if (firstDigits === NOT_DIGITS) return s.trim() === firstText.trim();
  const t = s.length === firstLength ? s : s.trim(); // plain digits have nothing to trim
  return t.length === firstLength && plainDigits(t) === firstDigits;
}

function visit(name: string, value: string): void {
  const n = name.length;
  if (n === 9) {
    if (name !== 'x-api-key' || keySeen) return;
    keySeen = true; // the first, as getHeader: an empty first one is not replaced
    grant = keys === null || value === '' ? null : keys.lookup(value);
    return;
  }
  if (n !== 14 || name !== 'content-length') return;
  if (seen++ === 0) {
    firstDigits = plainDigits(value);
    firstLength = value.length;
    if (firstDigits === NOT_DIGITS) firstText = value;
  } else if (!sameAsFirst(value)) conflict = true;
}

/**
 * True when the request carries Content-Length more than once with different values. `apiKeys`:
 * the table to look the first X-API-Key up in for scannedGrant() (null: not looked up).
 */
export function conflictingContentLength(req: HttpRequest, apiKeys: ApiKeyTable | null = null): boolean {
  seen = 0;
  firstDigits = 0; // absent reads as '' (0), as getHeader's ''
  firstLength = 0;
  firstText = '';
  conflict = false;
  keys = apiKeys;
  grant = null;
  keySeen = false;
  req.forEach(visit);
  return conflict;
}

/** After conflictingContentLength(req): the number the request's first Content-Length stands for (contentLengthValue; 0 when absent). */
export function scannedContentLengthValue(): number {
  return firstDigits === NOT_DIGITS ? contentLengthValue(firstText) : firstDigits;
}

/** After conflictingContentLength(req, apiKeys): the grant of the request's first X-API-Key, null when absent, empty or unknown. */
export function scannedGrant(): KeyGrant | null {
  return grant;
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
