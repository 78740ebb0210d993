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
import type { Buffer } from 'node:buffer';
import { asciiString, isFalse, isNull, isTrue, nameAt, numberEnd, scannedNumber, skipSpace, stringEnd } from './json-bytes.js';

/** The keys a body may hold (the schema's property names). */
export class FlatKeys {
  readonly names: readonly string[];
  constructor(names: readonly string[]) {
    if (names.length > 30) throw new Error('FlatKeys: at most 30 keys (a bit mask marks the ones seen)');
    this.names = names;
  }

  /** Index of the key spelled by buf[start, end), or -1. */
  indexOf(buf: Uint8Array, start: number, end: number): number {
    return nameAt(this.names, buf, start, end);
  }
}

/** The body as JSON.parse would return it, or undefined when it is not in the plain form (see above). */
export function parseFlatJson(buf: Buffer, keys: FlatKeys): Record<string, unknown> | undefined {
  const n = buf.length;
  let i = skipSpace(buf, 0, n);
  if (buf[i++] !== 0x7b) return undefined; // '{'
  const out: Record<string, unknown> = {};
  let seen = 0;
  i = skipSpace(buf, i, n);
  if (buf[i] === 0x7d) i++; // '}': the empty object
  else {
    for (;;) {
      // "key"
      if (buf[i] !== 0x22) return undefined;
      const keyEnd = stringEnd(buf, i + 1, n);
      if (keyEnd < 0) return undefined;
      const k = keys.indexOf(buf, i + 1, keyEnd);
      if (k < 0 || (seen & (1 << k)) !== 0) return undefined; // unknown or repeated: the full path decides
      seen |= 1 << k;
      i = skipSpace(buf, keyEnd + 1, n);
      if (buf[i++] !== 0x3a) return undefined; // ':'
      i = skipSpace(buf, i, n);
      // the value
      let value: unknown;
      if (buf[i] === 0x22) {
        const end = stringEnd(buf, i + 1, n);
        if (end < 0) return undefined;
        value = asciiString(buf, i + 1, end);
        i = end + 1;
      } else if (isTrue(buf, i)) {
        value = true;
        i += 4;
      } else if (isFalse(buf, i)) {
        value = false;
        i += 5;
      } else if (isNull(buf, i)) {
        value = null;
        i += 4;
      } else {
        i = numberEnd(buf, i, n);
        if (i < 0) return undefined; // object, array, negative number, or not JSON
        value = scannedNumber;
      }
      out[keys.names[k]] = value;
      i = skipSpace(buf, i, n);
      const sep = buf[i++];
      if (sep === 0x7d) break; // '}'
      if (sep !== 0x2c) return undefined; // ','
      i = skipSpace(buf, i, n);
    }
  }
  return skipSpace(buf, i, n) === n ? out : undefined;
}
