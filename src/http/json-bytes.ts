/**
 * Reading the plain form of a JSON body straight from its bytes: the pieces flat-json.ts (any
 * hot body, into what JSON.parse returns) and plain-body.ts (a hot body decoded and checked in
 * one pass) are made of. Each piece accepts only the plain form: strings of printable ASCII
 * without escapes, non-negative numbers without exponent or leading zero, the three literals.
 * Anything else is declined (-1), and the caller leaves the body to JSON.parse, whose verdict
 * and error messages stay the only ones a client sees.
 */
import type { Buffer } from 'node:buffer';
import type { QuotedWord } from '../schemas/hot-bodies.js';
import { fmix32 } from '../shm/hash.js';

const isSpace = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** The first index from `i` that is not JSON whitespace (n at the end). */
export function skipSpace(buf: Uint8Array, i: number, n: number): number {
  while (i < n && isSpace(buf[i])) i++;
  return i;
}

/**
 * The index of the closing quote of the string whose first character is at `start`, or -1
 * when the string is not plain: an escape, a control or non-ASCII byte, or no closing quote.
 */
export function stringEnd(buf: Uint8Array, start: number, n: number): number {
  for (let i = start; i < n; i++) {
    const b = buf[i];
    if (b === 0x22) return i;
    if (b < 0x20 || b > 0x7e || b === 0x5c) return -1;
  }
  return -1;
}

/** 10^k for the exact decimal conversion below (all exactly representable up to 10^22). */
const POW10 = Array.from({ length: 23 }, (_, k) => 10 ** k);
/** Up to 15 significant digits the mantissa stays an exact integer (below 2^53); longer numbers are converted from their text. */
const MAX_DIGITS = 15;

/** The value of the number numberEnd() read last (the front thread reads it at once). */
export let scannedNumber = 0;

/**
 * The end of the plain number at `i` (its value in scannedNumber), or -1. [0-9]+ (. [0-9]+)?,
 * no leading zero, no exponent. Up to 15 significant digits mantissa / 10^fraction digits is
 * the correctly rounded double JSON.parse gives (both operands exact, one division); a longer
 * one (what JavaScript and Python print for most computed amounts: 339.8298173981612) is
 * converted from its text, as JSON.parse converts it, instead of sending the whole body to
 * JSON.parse and the full schema check (2.4x the decoding time).
 */
export function numberEnd(buf: Buffer, i: number, n: number): number {
  const start = i;
  const c = buf[i];
  if (!(c >= 0x30 && c <= 0x39)) return -1; // a minus sign, or not a number
  if (c === 0x30 && buf[i + 1] >= 0x30 && buf[i + 1] <= 0x39) return -1; // "01" is not JSON
  let mantissa = 0;
  let digits = 0;
  let fraction = 0;
  while (i < n && buf[i] >= 0x30 && buf[i] <= 0x39) {
    mantissa = mantissa * 10 + (buf[i++] - 0x30);
    digits++;
  }
  if (buf[i] === 0x2e) {
    i++;
    while (i < n && buf[i] >= 0x30 && buf[i] <= 0x39) {
      mantissa = mantissa * 10 + (buf[i++] - 0x30);
      digits++;
      fraction++;
    }
    if (fraction === 0) return -1; // "1." is not JSON
  }
  scannedNumber = digits > MAX_DIGITS ? Number(buf.toString('latin1', start, i)) : fraction === 0 ? mantissa : mantissa / POW10[fraction];
  return i;
}

export const isTrue = (buf: Uint8Array, i: number): boolean => buf[i] === 0x74 && buf[i + 1] === 0x72 && buf[i + 2] === 0x75 && buf[i + 3] === 0x65;
export const isFalse = (buf: Uint8Array, i: number): boolean =>
  buf[i] === 0x66 && buf[i + 1] === 0x61 && buf[i + 2] === 0x6c && buf[i + 3] === 0x73 && buf[i + 4] === 0x65;
export const isNull = (buf: Uint8Array, i: number): boolean => buf[i] === 0x6e && buf[i + 1] === 0x75 && buf[i + 2] === 0x6c && buf[i + 3] === 0x6c;

/**
 * Decoded strings by a hash of their bytes; a slot holds the last string that hashed there.
 * JSON.parse internalizes every short string it reads (a lookup in V8's string table, which at
 * 100,000 rules is large and out of cache); here a repeated value (a country, a rule id) comes
 * from this small cache, so a usual body allocates nothing but its object.
 */
export const CACHE_SLOTS = 2048; // a power of two
const CACHE_MAX_LENGTH = 64; // longer strings (rare: ids near their 128 limit) are decoded every time
const cache: (string | undefined)[] = new Array<string | undefined>(CACHE_SLOTS).fill(undefined);
/**
 * Each slot's string as bytes too (slot * CACHE_MAX_LENGTH on; 128 KB), so that a hit is
 * confirmed byte against byte, without a charCodeAt (which checks the string's
 * representation) per character.
 */
const cacheBytes = new Uint8Array(CACHE_SLOTS * CACHE_MAX_LENGTH);

/**
 * The cache slot of buf[start, start + len): a hash of its length, its first and middle bytes
 * and its last four (constant time: hashing every byte cost more than the parse; two strings
 * sharing a slot only cost a decode). The last four because ids of one client usually differ
 * at the end: with the last byte alone, rule-0000 … rule-9999 fell into 10 slots and replaced
 * one another at every outcome.
 */
export function slotOf(buf: Uint8Array, start: number, len: number): number {
  if (len === 0) return 0;
  const last = start + len - 1;
  let h = Math.imul(len ^ (buf[start] << 8) ^ (buf[start + (len >> 1)] << 16), 0x9e3779b1);
  h ^= buf[last] ^ (buf[last - (len > 1 ? 1 : 0)] << 8) ^ (buf[last - (len > 2 ? 2 : 0)] << 16) ^ (buf[last - (len > 3 ? 3 : 0)] << 24);
  // The finaliser: every input bit reaches the low bits the slot is taken from.
  return fmix32(h) & (CACHE_SLOTS - 1);
}

/** The string of printable ASCII in buf[start, end), from the cache when it was seen before. */
export function asciiString(buf: Buffer, start: number, end: number): string {
  const len = end - start;
  if (len > CACHE_MAX_LENGTH) return buf.toString('latin1', start, end);
  const slot = slotOf(buf, start, len);
  const hit = cache[slot];
  const at = slot * CACHE_MAX_LENGTH;
  if (hit !== undefined && hit.length === len && bytesEqual(cacheBytes, at, buf, start, len)) return hit;
  const s = buf.toString('latin1', start, end);
  cache[slot] = s;
  cacheBytes.set(buf.subarray(start, end), at);
  return s;
}

/** A capital letter's place in the alphabet by its byte, -1 for every other byte. */
const CAPITAL = new Int8Array(256).fill(-1);
for (let c = 0x41; c <= 0x5a; c++) CAPITAL[c] = c - 0x41;
/** The codes of two and of three capitals decoded so far, by their letters' places (26² and 26³ slots). */
const twoCapitals: (string | undefined)[] = new Array<string | undefined>(26 * 26).fill(undefined);
const threeCapitals: (string | undefined)[] = new Array<string | undefined>(26 * 26 * 26).fill(undefined);

/**
 * The code of two or three capitals at buf[start, start + len) (a country, a currency), or
 * undefined for any other length or byte (the caller then checks and decodes it as any other
 * string). Every such code has a slot of its own, so it is found by its letters, with neither
 * asciiString's hash nor its compare: ~40 instructions where the cache took ~300.
 */
export function capitalsCode(buf: Uint8Array, start: number, len: number): string | undefined {
  if (len === 2) {
    const a = CAPITAL[buf[start]];
    const b = CAPITAL[buf[start + 1]];
    if ((a | b) < 0) return undefined;
    const k = a * 26 + b;
    return twoCapitals[k] ?? (twoCapitals[k] = String.fromCharCode(0x41 + a, 0x41 + b));
  }
  if (len === 3) {
    const a = CAPITAL[buf[start]];
    const b = CAPITAL[buf[start + 1]];
    const c = CAPITAL[buf[start + 2]];
    if ((a | b | c) < 0) return undefined;
    const k = (a * 26 + b) * 26 + c;
    return threeCapitals[k] ?? (threeCapitals[k] = String.fromCharCode(0x41 + a, 0x41 + b, 0x41 + c));
  }
  return undefined;
}

/** The index of the name (ASCII) spelled by buf[start, end), or -1. */
export function nameAt(names: readonly string[], buf: Uint8Array, start: number, end: number): number {
  for (let k = 0; k < names.length; k++) if (spells(buf, start, end, names[k])) return k;
  return -1;
}

/**
 * The index of the word that buf spells from `start` up to and with its closing quote, or -1:
 * one pass over the bytes, where stringEnd() and nameAt() take two. The bytes that match a
 * word hold no escape, so the quote after them ends the string. Words are tried from `from` on
 * (wrapping round): a body whose keys come in the form's order finds each at its first try.
 */
export function quotedNameAt(words: readonly QuotedWord[], buf: Uint8Array, start: number, n: number, from: number): number {
  const count = words.length;
  for (let t = 0; t < count; t++) {
    let k = from + t;
    if (k >= count) k -= count;
    const word = words[k];
    // Bounds checked here, not left to the load: a typed-array read past the end deoptimises
    // the optimised code the first time it happens (under load, for the first body to meet it).
    if (start + word.size <= n && groupsAt(buf, start, word.groups, word.size)) return k;
  }
  return -1;
}

/** Whether buf[start, start + size) holds the bytes of `groups` (QuotedWord); the caller checked it is within buf. */
function groupsAt(buf: Uint8Array, start: number, groups: readonly number[], size: number): boolean {
  let i = 0;
  let g = 0;
  for (; i + 4 <= size; i += 4, g++) {
    const x = start + i;
    if ((buf[x] | (buf[x + 1] << 8) | (buf[x + 2] << 16) | (buf[x + 3] << 24)) !== groups[g]) return false;
  }
  const rest = size - i;
  if (rest === 0) return true;
  const x = start + i;
  const last = rest === 1 ? buf[x] : rest === 2 ? buf[x] | (buf[x + 1] << 8) : buf[x] | (buf[x + 1] << 8) | (buf[x + 2] << 16);
  return last === groups[g];
}

/**
 * Whether a[aStart, aStart + len) equals b[bStart, bStart + len) (the caller checked both are
 * within their arrays). Four bytes a step: in straight-line code V8 checks each array's map
 * and finds its data once per step, where a byte-a-step loop does both at every byte (~24
 * instructions a byte; ~9 here).
 */
export function bytesEqual(a: Uint8Array, aStart: number, b: Uint8Array, bStart: number, len: number): boolean {
  let i = 0;
  for (; i + 4 <= len; i += 4) {
    const x = aStart + i;
    const y = bStart + i;
    if (a[x] !== b[y] || a[x + 1] !== b[y + 1] || a[x + 2] !== b[y + 2] || a[x + 3] !== b[y + 3]) return false;
  }
  for (; i < len; i++) if (a[aStart + i] !== b[bStart + i]) return false;
  return true;
}

/** Whether buf[start, end) spells `word` (an ASCII string). */
export function spells(buf: Uint8Array, start: number, end: number, word: string): boolean {
  const len = end - start;
  if (word.length !== len) return false;
  let i = 0;
  while (i < len && word.charCodeAt(i) === buf[start + i]) i++;
  return i === len;
}
