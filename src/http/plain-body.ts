/**
 * A hot body's plain form (src/schemas/hot-bodies.ts) read and checked straight from its
 * bytes in one pass, into the form's object of one fixed shape. For a body in that form it
 * returns what JSON.parse and the endpoint's validator would (the same value in every field
 * the body holds); for anything else it returns undefined and the body takes the flat parser
 * and the validator (decode-body.ts), or JSON.parse and the full schema check, whose verdicts
 * and error messages stay the only ones a client sees.
 *
 * Why (issue 20): after parseFlatJson the route path still stored each value under a key
 * known only at run time (V8's megamorphic keyed store), walked the object again to check it
 * (a for-in and a switch on the key's name) and met bodies of as many hidden classes as
 * clients have key orders. Here the fields are checked as they are read, an enum value is the
 * schema's own string (no decode, no cache), and the handler always sees one hidden class:
 * route CPU per request 0.96× of the flat parser's path (compare-builds, 1,000 rules, 5 rounds).
 */
import type { Buffer } from 'node:buffer';
import { PlainKind, isIdChar, isLetter, type PlainField, type PlainForm } from '../schemas/hot-bodies.js';
import { MAX_ID_LENGTH } from '../schemas/common.js';
import { asciiString, capitalsCode, isFalse, isNull, isTrue, numberEnd, quotedNameAt, scannedNumber, skipSpace, stringEnd } from './json-bytes.js';

/** The decoded values by field, reset for each body (the front thread decodes one at a time). */
const values: unknown[] = new Array<unknown>(30).fill(undefined);
/** The value decodeValue() read last. */
let value: unknown = undefined;

/**
 * Byte classes: bit LETTER for A-Z a-z, bit ID_CHAR for ID_PATTERN's characters. 256 entries,
 * so that any byte (a non-ASCII one too) reads a class of 0 without an out-of-bounds load.
 */
const LETTER = 1;
const ID_CHAR = 2;
const CLASSES = new Uint8Array(256);
for (let c = 0; c < 128; c++) CLASSES[c] = (isLetter(c) ? LETTER : 0) | (isIdChar(c) ? ID_CHAR : 0);

/** Whether every byte of buf[start, end) is of class `bit`. */
function allOf(buf: Uint8Array, start: number, end: number, bit: number): boolean {
  for (let i = start; i < end; i++) if ((CLASSES[buf[i]] & bit) === 0) return false;
  return true;
}

/**
 * Reads the string value of `f` whose first character is at buf[start] into `value`: the
 * index after its closing quote, or -1 when the string is not plain or the schema would
 * refuse it. Each kind reads its bytes once: a choice or a run of letters is matched where it
 * stands, an id is scanned by its character class up to the quote; only free text needs
 * stringEnd()'s scan for escapes and control bytes.
 */
function stringValue(f: PlainField, buf: Buffer, start: number, n: number): number {
  const kind = f.kind;
  let end: number;
  if (kind === PlainKind.OneOf) {
    const c = quotedNameAt(f.choiceWords, buf, start, n, 0);
    if (c < 0) return -1;
    value = f.choices[c];
    return start + f.choiceWords[c].size;
  }
  if (kind === PlainKind.Letters) {
    end = start + f.max;
    if (end >= n || buf[end] !== 0x22) return -1;
    const code = capitalsCode(buf, start, f.max); // the usual case: capitals, found by their letters
    if (code !== undefined) {
      value = code;
      return end + 1;
    }
    if (!allOf(buf, start, end, LETTER)) return -1;
  } else if (kind === PlainKind.Id) {
    end = start;
    while (end < n && (CLASSES[buf[end]] & ID_CHAR) !== 0) end++;
    if (end >= n || buf[end] !== 0x22 || end === start || end - start > MAX_ID_LENGTH) return -1;
  } else if (kind === PlainKind.Text) {
    end = stringEnd(buf, start, n);
    if (end < 0 || end - start < f.min || end - start > f.max) return -1;
  } else return -1; // a string where a number or a boolean belongs
  value = f.cached ? asciiString(buf, start, end) : buf.toString('latin1', start, end);
  return end + 1;
}

/** Reads the value of `f` at buf[i] into `value`: the index after it, or -1. */
function decodeValue(f: PlainField, buf: Buffer, i: number, n: number): number {
  if (buf[i] === 0x22) return stringValue(f, buf, i + 1, n);
  if (isNull(buf, i)) {
    if (!f.nullable) return -1;
    value = null;
    return i + 4;
  }
  if (f.kind === PlainKind.Boolean) {
    if (isTrue(buf, i)) {
      value = true;
      return i + 4;
    }
    if (isFalse(buf, i)) {
      value = false;
      return i + 5;
    }
    return -1;
  }
  if (f.kind !== PlainKind.Number) return -1;
  const end = numberEnd(buf, i, n);
  if (end < 0 || scannedNumber < f.min || scannedNumber > f.max) return -1;
  value = scannedNumber;
  return end;
}

/** The body as the form's object, or undefined when it is not in the plain form (see above). */
export function decodePlainBody<T>(form: PlainForm<T>, buf: Buffer): T | undefined {
  const fields = form.fields;
  const names = form.nameWords;
  for (let k = 0; k < fields.length; k++) values[k] = undefined;
  const n = buf.length;
  let i = skipSpace(buf, 0, n);
  if (buf[i] !== 0x7b) return undefined; // '{'
  i = skipSpace(buf, i + 1, n);
  let seen = 0;
  let next = 0; // the field expected next (keys usually come in the form's order)
  if (buf[i] === 0x7d) i++; // '}': the empty object (a form with no required field)
  else {
    for (;;) {
      if (buf[i] !== 0x22) return undefined;
      const k = quotedNameAt(names, buf, i + 1, n, next);
      if (k < 0 || (seen & (1 << k)) !== 0) return undefined; // unknown (or not plain) or repeated
      seen |= 1 << k;
      next = k + 1;
      // Whitespace is skipped only where there is some (every JSON whitespace byte is below
      // 0x21): most bodies have none, and each skipSpace() is a call and a loop.
      i += names[k].size + 1; // the opening quote, the name and its closing quote
      if (buf[i] !== 0x3a) {
        i = skipSpace(buf, i, n);
        if (buf[i] !== 0x3a) return undefined; // ':'
      }
      if (buf[++i] <= 0x20) i = skipSpace(buf, i, n);
      i = decodeValue(fields[k], buf, i, n);
      if (i < 0) return undefined;
      values[k] = value;
      let sep = buf[i];
      if (sep <= 0x20) sep = buf[(i = skipSpace(buf, i, n))];
      i++;
      if (sep === 0x7d) break; // '}'
      if (sep !== 0x2c) return undefined; // ','
      if (buf[i] <= 0x20) i = skipSpace(buf, i, n);
    }
  }
  if (skipSpace(buf, i, n) !== n || (seen & form.required) !== form.required) return undefined;
  return form.make(values);
}
