/**
 * A JSON parser for the hot bodies' usual form (POST /v1/route, POST /v1/outcome): one object
 * whose values are strings of printable ASCII without escapes, plain non-negative numbers,
 * true, false or null, under keys the endpoint's schema names, each once. For such a body it
 * returns what JSON.parse returns (same keys in the same order, same values); for anything else
 * (nesting, an escape or a non-ASCII byte, an exponent, a minus sign, more than 15 significant
 * digits, an unknown or repeated key, malformed text) it returns undefined and the router takes
 * the full path (depth scan, JSON.parse, surrogate check), whose verdict and error messages stay
 * the only ones a client ever sees. Validation is not done here: the result goes through the
 * endpoint's validator like any parsed body.
 *
 * Why: on the route path, JSON.parse with the copy to a string, the depth scan and the
 * surrogate test were about a quarter of the request's CPU, and JSON.parse internalizes every
 * short string it reads (a lookup in V8's string table, which at 100,000 rules is large and
 * out of cache). Here a repeated value (a country, a rule id) comes from a small cache of the
 * strings already decoded, so a usual body allocates nothing but its object.
 */

/** Decoded strings by a hash of their bytes; a slot holds the last string that hashed there. */
const CACHE_SLOTS = 2048; // a power of two
const CACHE_MAX_LENGTH = 64; // longer strings (rare: ids near their 128 limit) are decoded every time
const cache: (string | undefined)[] = new Array<string | undefined>(CACHE_SLOTS).fill(undefined);

/** 10^k for the exact decimal conversion below (all exactly representable up to 10^22). */
const POW10 = Array.from({ length: 23 }, (_, k) => 10 ** k);
/** Up to 15 significant digits the mantissa stays an exact integer (below 2^53). */
const MAX_DIGITS = 15;

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** The keys a body may hold (the schema's property names). */
export class FlatKeys {
  readonly names: readonly string[];
  constructor(names: readonly string[]) {
    if (names.length > 30) throw new Error('FlatKeys: at most 30 keys (a bit mask marks the ones seen)');
    this.names = names;
  }

  /** Index of the key spelled by buf[start, end), or -1. */
  indexOf(buf: Uint8Array, start: number, end: number): number {
    const len = end - start;
    const names = this.names;
    for (let k = 0; k < names.length; k++) {
      const name = names[k];
      if (name.length !== len || name.charCodeAt(0) !== buf[start]) continue;
      let i = 1;
      while (i < len && name.charCodeAt(i) === buf[start + i]) i++;
      if (i === len) return k;
    }
    return -1;
  }
}

/**
 * The cache slot of buf[start, end): a hash of its length and first, middle and last bytes
 * (constant time: hashing every byte cost more than the parse; two strings sharing a slot
 * only cost a decode). Kept within small-integer range.
 */
function slotOf(buf: Buffer, start: number, len: number): number {
  if (len === 0) return 0;
  const x = len ^ (buf[start] << 7) ^ (buf[start + (len >> 1)] << 14) ^ (buf[start + len - 1] << 21);
  return (x ^ (x >> 11) ^ (x >> 17)) & (CACHE_SLOTS - 1);
}

/** The string of printable ASCII in buf[start, end), from the cache when it was seen before. */
function asciiString(buf: Buffer, start: number, end: number): string {
  const len = end - start;
  if (len > CACHE_MAX_LENGTH) return buf.toString('latin1', start, end);
  const slot = slotOf(buf, start, len);
  const hit = cache[slot];
  if (hit !== undefined && hit.length === len) {
    let i = 0;
    while (i < len && hit.charCodeAt(i) === buf[start + i]) i++;
    if (i === len) return hit;
  }
  const s = buf.toString('latin1', start, end);
  cache[slot] = s;
  return s;
}

/** The body as JSON.parse would return it, or undefined when it is not in the plain form (see above). */
export function parseFlatJson(buf: Buffer, keys: FlatKeys): Record<string, unknown> | undefined {
  const n = buf.length;
  let i = 0;
  while (i < n && isSpace(buf[i])) i++;
  if (buf[i++] !== 0x7b) return undefined; // '{'
  const out: Record<string, unknown> = {};
  let seen = 0;
  while (i < n && isSpace(buf[i])) i++;
  if (buf[i] === 0x7d) i++; // '}': the empty object
  else {
    for (;;) {
      // "key"
      if (buf[i++] !== 0x22) return undefined;
      const ks = i;
      while (i < n && buf[i] !== 0x22) i++;
      if (i >= n) return undefined;
      const k = keys.indexOf(buf, ks, i++);
      if (k < 0 || (seen & (1 << k)) !== 0) return undefined; // unknown or repeated: the full path decides
      seen |= 1 << k;
      while (i < n && isSpace(buf[i])) i++;
      if (buf[i++] !== 0x3a) return undefined; // ':'
      while (i < n && isSpace(buf[i])) i++;
      // the value
      const c = buf[i];
      let value: unknown;
      if (c === 0x22) {
        const vs = ++i;
        for (;;) {
          if (i >= n) return undefined;
          const b = buf[i];
          if (b === 0x22) break;
          if (b < 0x20 || b > 0x7e || b === 0x5c) return undefined; // control, non-ASCII, escape
          i++;
        }
        value = asciiString(buf, vs, i++);
      } else if (c >= 0x30 && c <= 0x39) {
        // [0-9]+ (. [0-9]+)?, no leading zero, no exponent: mantissa / 10^fraction digits is
        // then the correctly rounded double JSON.parse gives (both operands exact, one division).
        let mantissa = 0;
        let digits = 0;
        let fraction = 0;
        if (c === 0x30 && buf[i + 1] >= 0x30 && buf[i + 1] <= 0x39) return undefined; // "01" is not JSON
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
          if (fraction === 0) return undefined; // "1." is not JSON
        }
        if (digits > MAX_DIGITS) return undefined;
        value = fraction === 0 ? mantissa : mantissa / POW10[fraction];
      } else if (c === 0x74 && buf[i + 1] === 0x72 && buf[i + 2] === 0x75 && buf[i + 3] === 0x65) {
        value = true;
        i += 4;
      } else if (c === 0x66 && buf[i + 1] === 0x61 && buf[i + 2] === 0x6c && buf[i + 3] === 0x73 && buf[i + 4] === 0x65) {
        value = false;
        i += 5;
      } else if (c === 0x6e && buf[i + 1] === 0x75 && buf[i + 2] === 0x6c && buf[i + 3] === 0x6c) {
        value = null;
        i += 4;
      } else return undefined; // object, array, negative number, or not JSON
      out[keys.names[k]] = value;
      while (i < n && isSpace(buf[i])) i++;
      const sep = buf[i++];
      if (sep === 0x7d) break; // '}'
      if (sep !== 0x2c) return undefined; // ','
      while (i < n && isSpace(buf[i])) i++;
    }
  }
  while (i < n && isSpace(buf[i])) i++;
  return i === n ? out : undefined;
}
