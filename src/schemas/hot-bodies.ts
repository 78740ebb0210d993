/**
 * The plain form of the two hot bodies (POST /v1/route, POST /v1/outcome): a table of their
 * fields and what each must hold, and the check of a parsed body against it. The plain form
 * accepts only bodies the compiled TypeBox schema accepts too — the shapes clients send — and
 * declines anything else (an unknown or unusual field, a wrong type, a bound broken), which
 * then goes through the full schema check for its verdict and its error messages. So the
 * contract stays the schema's; this is a shortcut for the common case, about a tenth of the
 * compiled check's cost (no regular expression, no union walk).
 *
 * The same tables drive the decoder that reads a hot body's plain form straight from its bytes
 * (src/http/plain-body.ts), so a field's rules are written once for both.
 */
import { AMOUNT_TIERS } from '../routing/amount-tier.js';
import { MAX_ID_LENGTH } from './common.js';
import { PAYMENT_METHODS, TRANSACTION_TYPES, type OutcomeReport, type RouteRequest } from './routing.js';

/** What a plain field holds. */
export const enum PlainKind {
  /** Exactly `max` ASCII letters (ISO codes, case-insensitive). */
  Letters,
  /** One of `choices`. */
  OneOf,
  /** A string of `min` to `max` characters. */
  Text,
  /** An id: 1 to MAX_ID_LENGTH of letters, digits, _ . : - (ID_PATTERN). */
  Id,
  /** A number from `min` to `max`. */
  Number,
  Boolean,
}

export class PlainField {
  constructor(
    readonly name: string,
    readonly kind: PlainKind,
    readonly nullable = false,
    readonly min = 0,
    readonly max = 0,
    readonly choices: readonly string[] = [],
  ) {
    this.choiceWords = choices.map((c) => new QuotedWord(c));
  }
  /** The choices as the decoder compares a body's bytes with them, by choice. */
  readonly choiceWords: readonly QuotedWord[];
  /** Whether the decoder takes this field's strings through its cache (json-bytes.ts asciiString); see uncached(). */
  cached = true;

  /**
   * For a field whose value is new in nearly every body (a transaction id): decoded without
   * the string cache. Cached, each such value would cost a copy of its bytes and evict a value
   * that does repeat (a rule id, a country), and, held by the cache, survive the next scavenge
   * instead of dying with its request.
   */
  uncached(): this {
    this.cached = false;
    return this;
  }
}

/**
 * An ASCII word the decoder looks for in a body (a field's name, an enum's value) followed by
 * its closing quote, as the little-endian 32-bit groups of those bytes: a body's bytes are
 * compared four at a time with one number (json-bytes.ts quotedNameAt), where a compare byte by
 * byte loads a byte of each side and checks both arrays at every step.
 */
export class QuotedWord {
  /** The bytes compared: the word's, then the quote. */
  readonly size: number;
  /** Group g holds bytes 4g to 4g + 3 (the last group fewer: size - 4g), the first in the low bits. */
  readonly groups: readonly number[];
  constructor(text: string) {
    const bytes = Array.from(`${text}"`, (c) => c.charCodeAt(0));
    if (bytes.some((b) => b > 0x7e || b < 0x20 || b === 0x5c) || text.includes('"')) throw new Error(`QuotedWord: "${text}" is not plain ASCII`);
    this.size = bytes.length;
    const groups: number[] = [];
    for (let i = 0; i < bytes.length; i += 4) groups.push(bytes.slice(i, i + 4).reduce((g, b, j) => g | (b << (8 * j)), 0));
    this.groups = groups;
  }
}

/**
 * A hot body's fields (in the schema's order), the ones it must hold, and how the decoder
 * makes its value: `make` gets the decoded values by field (undefined where absent) and
 * returns an object of one fixed shape, so the handler's reads of it stay monomorphic.
 */
export class PlainForm<T> {
  /** Bit k set: field k must be present. */
  readonly required: number;
  constructor(
    readonly fields: readonly PlainField[],
    required: readonly string[],
    readonly make: (values: readonly unknown[]) => T,
  ) {
    if (fields.length > 30) throw new Error('PlainForm: at most 30 fields (a bit mask marks the ones seen)');
    this.names = fields.map((f) => f.name);
    this.nameWords = this.names.map((name) => new QuotedWord(name));
    this.indexOf = new Map(this.names.map((name, k) => [name, k]));
    this.required = 0;
    for (const name of required) {
      const k = this.indexOf.get(name);
      if (k === undefined) throw new Error(`PlainForm: required field "${name}" is not one of the fields`);
      this.required |= 1 << k;
    }
  }
  /** The fields' names, by field. */
  readonly names: readonly string[];
  /** The names as the decoder compares a body's keys with them, by field. */
  readonly nameWords: readonly QuotedWord[];
  /** A field's index by its name. */
  readonly indexOf: ReadonlyMap<string, number>;
}

export const isLetter = (c: number): boolean => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
/** ID_PATTERN's characters: letters, 0-9 and ':' (48-58), '_', '.', '-'. */
export const isIdChar = (c: number): boolean => isLetter(c) || (c >= 48 && c <= 58) || c === 95 || c === 46 || c === 45;

function letters(v: string, n: number): boolean {
  if (v.length !== n) return false;
  for (let i = 0; i < n; i++) if (!isLetter(v.charCodeAt(i))) return false;
  return true;
}

function isId(v: string): boolean {
  if (v.length === 0 || v.length > MAX_ID_LENGTH) return false;
  for (let i = 0; i < v.length; i++) if (!isIdChar(v.charCodeAt(i))) return false;
  return true;
}

/** Whether `x` is a plain value of field `f`. */
function plainValue(f: PlainField, x: unknown): boolean {
  if (x === null) return f.nullable;
  switch (f.kind) {
    case PlainKind.Letters:
      return typeof x === 'string' && letters(x, f.max);
    case PlainKind.OneOf:
      return typeof x === 'string' && f.choices.includes(x);
    case PlainKind.Text:
      return typeof x === 'string' && x.length >= f.min && x.length <= f.max;
    case PlainKind.Id:
      return typeof x === 'string' && isId(x);
    case PlainKind.Number:
      return typeof x === 'number' && x >= f.min && x <= f.max;
    case PlainKind.Boolean:
      return typeof x === 'boolean';
  }
}

/** Whether a parsed body is in the form's plain shape (see the module comment). */
function plainObject(form: PlainForm<unknown>, v: unknown): boolean {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  let seen = 0;
  for (const k in v) {
    const i = form.indexOf.get(k);
    if (i === undefined || !plainValue(form.fields[i], (v as Record<string, unknown>)[k])) return false;
    seen |= 1 << i;
  }
  return (seen & form.required) === form.required;
}

export const ROUTE_REQUEST_FORM = new PlainForm<RouteRequest>(
  [
    new PlainField('country', PlainKind.Letters, false, 2, 2),
    new PlainField('currency', PlainKind.Letters, false, 3, 3),
    new PlainField('payment_method', PlainKind.OneOf, false, 0, 0, PAYMENT_METHODS),
    new PlainField('card_type', PlainKind.Text, false, 1, 64),
    new PlainField('transaction_type', PlainKind.OneOf, false, 0, 0, TRANSACTION_TYPES),
    new PlainField('amount', PlainKind.Number, true, 0, 1e15),
    new PlainField('amount_tier', PlainKind.OneOf, true, 0, 0, AMOUNT_TIERS),
    new PlainField('transaction_id', PlainKind.Id).uncached(),
  ],
  ['country', 'currency'],
  // Every field present (undefined where the body has none): one hidden class for every body.
  (v) => ({
    country: v[0] as string,
    currency: v[1] as string,
    payment_method: v[2] as RouteRequest['payment_method'],
    card_type: v[3] as string | undefined,
    transaction_type: v[4] as RouteRequest['transaction_type'],
    amount: v[5] as number | null | undefined,
    amount_tier: v[6] as RouteRequest['amount_tier'],
    transaction_id: v[7] as string | undefined,
  }),
);

export const OUTCOME_REPORT_FORM = new PlainForm<OutcomeReport>(
  [
    new PlainField('rule_id', PlainKind.Id),
    new PlainField('processor_id', PlainKind.Id),
    new PlainField('success', PlainKind.Boolean),
    new PlainField('latency_ms', PlainKind.Number, false, 0, 3_600_000),
    new PlainField('error_code', PlainKind.Text, true, 0, MAX_ID_LENGTH),
    new PlainField('transaction_id', PlainKind.Id).uncached(),
  ],
  ['rule_id', 'processor_id', 'success', 'latency_ms'],
  (v) => ({
    rule_id: v[0] as string,
    processor_id: v[1] as string,
    success: v[2] as boolean,
    latency_ms: v[3] as number,
    error_code: v[4] as string | null | undefined,
    transaction_id: v[5] as string | undefined,
  }),
);

/** A RouteRequest in its plain form (see the module comment). */
export const plainRouteRequest = (v: unknown): boolean => plainObject(ROUTE_REQUEST_FORM, v);

/** An OutcomeReport in its plain form (see the module comment). */
export const plainOutcomeReport = (v: unknown): boolean => plainObject(OUTCOME_REPORT_FORM, v);
