/**
 * Property-based fuzzing of the HTTP API (fast-check) against the real server.
 *
 * Bodies are built as JSON *text*, not through JSON.stringify, so they can carry what a
 * hostile client can send: numbers JSON.stringify cannot write (`1e400` → Infinity, `-0`),
 * duplicate keys, `__proto__` keys, raw invalid UTF-8 bytes, lone-surrogate escapes, deep
 * nesting, and text that is not JSON at all.
 *
 * The oracle: the test parses the same bytes (JSON.parse, like the server) and knows, for the
 * field it mutated, what the schema allows. Input that cannot be valid must get a 4xx; input
 * that may be valid may get the endpoint's documented 2xx. Never a 5xx; every 4xx is the
 * catalogued JSON error; a rejected request changes no stored state (`snapshot`).
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import type { TestResponse, TestServer } from './server.js';

// ── JSON text with hostile parts ─────────────────────────────────────────────────────────

/** Written as is: a number JSON.stringify cannot produce, an invalid token, raw bytes. */
export class Raw {
  constructor(
    readonly bytes: Buffer,
    readonly label: string,
  ) {}
  static text(t: string, label = t.length > 40 ? `${t.slice(0, 40)}…` : t): Raw {
    return new Raw(Buffer.from(t, 'utf8'), label);
  }
  toJSON(): string {
    return `Raw(${this.label})`;
  }
}

/** An object written with its entries in order: duplicate and `__proto__` keys allowed. */
export class Entries {
  constructor(readonly entries: [string, unknown][]) {}
  toJSON(): unknown {
    return { entries: this.entries };
  }
}

/** Deep copy of a plain value into the Entries form (so it can be mutated and rendered). */
export function toTree(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(toTree);
  if (v !== null && typeof v === 'object' && !(v instanceof Raw) && !(v instanceof Entries)) {
    return new Entries(Object.entries(v).map(([k, x]) => [k, toTree(x)]));
  }
  return v;
}

export function render(v: unknown): Buffer {
  const parts: Buffer[] = [];
  const walk = (x: unknown): void => {
    if (x instanceof Raw) parts.push(x.bytes);
    else if (x instanceof Entries) {
      parts.push(Buffer.from('{'));
      x.entries.forEach(([k, val], i) => {
        if (i > 0) parts.push(Buffer.from(','));
        parts.push(Buffer.from(JSON.stringify(k) + ':'));
        walk(val);
      });
      parts.push(Buffer.from('}'));
    } else if (Array.isArray(x)) {
      parts.push(Buffer.from('['));
      x.forEach((val, i) => {
        if (i > 0) parts.push(Buffer.from(','));
        walk(val);
      });
      parts.push(Buffer.from(']'));
    } else if (x === undefined) {
      parts.push(Buffer.from('null'));
    } else {
      // JSON.stringify writes lone surrogates as \udxxx escapes: valid JSON text.
      parts.push(Buffer.from(JSON.stringify(x)));
    }
  };
  walk(v);
  return Buffer.concat(parts);
}

/** What the server's JSON.parse makes of the bytes: the value, or `undefined` + ok=false. */
export function parseLikeServer(bytes: Buffer): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(bytes.toString('utf8')) };
  } catch {
    return { ok: false };
  }
}

/** The service refuses bodies nesting arrays/objects deeper than this (README, Limits). */
export const MAX_JSON_DEPTH = 32;

/** Deepest array/object nesting of JSON text (strings skipped). */
export function jsonDepth(bytes: Buffer): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i];
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) max = Math.max(max, ++depth);
    else if (c === 0x5d || c === 0x7d) depth--;
  }
  return max;
}

const LONE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
export function hasLoneSurrogate(v: unknown): boolean {
  const stack = [v];
  while (stack.length > 0) {
    const x = stack.pop();
    if (typeof x === 'string') {
      if (LONE.test(x)) return true;
    } else if (Array.isArray(x)) stack.push(...x);
    else if (x !== null && typeof x === 'object') {
      for (const k of Object.keys(x)) {
        if (LONE.test(k)) return true;
        stack.push((x as Record<string, unknown>)[k]);
      }
    }
  }
  return false;
}

// ── hostile values ───────────────────────────────────────────────────────────────────────

const nested = (depth: number, open = '[', close = ']') => Raw.text(open.repeat(depth) + close.repeat(depth), `${open}×${depth}`);
const nestedObjects = (depth: number) => Raw.text('{"a":'.repeat(depth) + '1' + '}'.repeat(depth), `{"a":×${depth}`);

export const PROTO_KEYS = ['__proto__', 'constructor', 'prototype'] as const;

/** Strings a checkout client should never send, and some it might. */
export const hostileString: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '*',
    'NaN',
    'Infinity',
    '-Infinity',
    '1e400',
    '-0',
    'null',
    'true',
    '\u0000',
    'a\u0000b',
    '\u202eevil\u202c', // RTL override
    'مرحبا بالعالم', // RTL script
    '💳🚀👩‍👩‍👧‍👦',
    'e\u0301\u0301\u0301', // combining marks
    '\ud800', // lone high surrogate (sent as a JSON escape)
    'x\udc00y', // lone low surrogate
    '\ufeffBOM',
    '\uffff',
    'a'.repeat(128),
    'a'.repeat(129),
    'b'.repeat(4000),
    '__proto__',
    'constructor',
    'prototype',
    '../../etc/passwd',
    '%00',
    '<script>alert(1)</script>',
    "' OR 1=1 --",
    '${jndi:ldap://x}',
    'US',
    'USD',
    'card',
    'visa',
    'failover.triggered',
  ),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'grapheme-ascii', minLength: 120, maxLength: 200 }),
  // A lone surrogate somewhere in a short string (written as a \udxxx escape).
  fc
    .tuple(fc.string({ maxLength: 6 }), fc.integer({ min: 0xd800, max: 0xdfff }), fc.string({ maxLength: 6 }))
    .map(([a, c, b]) => a + String.fromCharCode(c) + b),
  // Raw invalid UTF-8 inside a string: the server decodes it to U+FFFD.
  fc.constantFrom(
    new Raw(Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22]), '"<ED A0 80>"'),
    new Raw(Buffer.from([0x22, 0xc0, 0xaf, 0x22]), '"<C0 AF>"'),
    new Raw(Buffer.from([0x22, 0xff, 0xfe, 0x41, 0x22]), '"<FF FE>A"'),
    new Raw(Buffer.from([0x22, 0xf4, 0x90, 0x80, 0x80, 0x22]), '"<F4 90 80 80>"'),
  ),
);

export const hostileNumber: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(
    0,
    1,
    -1,
    0.5,
    0.9,
    1.0000001,
    1e308,
    -1e308,
    5e-324,
    1e15,
    1e15 + 2,
    2 ** 53 + 2,
    3_600_001,
    Raw.text('-0'),
    Raw.text('1e400'), // JSON.parse → Infinity
    Raw.text('-1e400'), // → -Infinity
    Raw.text('1e-400'), // → 0
    Raw.text('0.1e1'),
    Raw.text('123456789012345678901234567890'),
    Raw.text('1.00000000000000000000000000001'),
  ),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

/** Not JSON at all: the whole body (or a value inside it) is malformed. */
export const invalidToken: fc.Arbitrary<unknown> = fc.constantFrom(
  Raw.text('NaN'),
  Raw.text('Infinity'),
  Raw.text('-Infinity'),
  Raw.text('undefined'),
  Raw.text("'single'"),
  Raw.text('0x10'),
  Raw.text('01'),
  Raw.text('+1'),
  Raw.text('.5'),
  Raw.text('"unterminated'),
  Raw.text('[1,]'),
  Raw.text('{"a":1,}'),
  Raw.text('"\\x41"'),
  Raw.text('"\\u12"'),
  Raw.text('tru'),
  new Raw(Buffer.from([0xff, 0xfe]), '<FF FE>'),
);

const protoObject: fc.Arbitrary<unknown> = fc
  .tuple(fc.constantFrom(...PROTO_KEYS), fc.constantFrom(...PROTO_KEYS), fc.constantFrom(true, 1, 'polluted', null))
  .map(([a, b, v]) => new Entries([[a, new Entries([[b, new Entries([['polluted', v]])]])]]));

export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: hostileString, weight: 5 },
  { arbitrary: hostileNumber, weight: 4 },
  { arbitrary: fc.constantFrom(true, false, null), weight: 2 },
  { arbitrary: invalidToken, weight: 1 },
  {
    arbitrary: fc.oneof(
      fc.constant([]),
      fc.array(fc.oneof(hostileString, hostileNumber), { maxLength: 8 }),
      fc.constantFrom(nested(5000), nested(50), nestedObjects(2000), nested(5000, '[', ']')),
    ),
    weight: 2,
  },
  { arbitrary: fc.oneof(fc.constant(new Entries([])), protoObject), weight: 2 },
);

/** A whole body that is not a JSON object. */
export const hostileWholeBody: fc.Arbitrary<unknown> = fc.oneof(
  hostileString,
  hostileNumber,
  invalidToken,
  fc.constantFrom(true, false, null, [], [new Entries([])]),
  fc.constantFrom(Raw.text(''), Raw.text('   \n'), Raw.text('\u0000'), nested(5000), nested(30_000), nestedObjects(5000)),
);

export const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=zzz',
  'application/xml',
  'application/json; charset=utf-16',
];

// ── the schema oracle ────────────────────────────────────────────────────────────────────

/** `conforms(v)`: v satisfies the field's schema; `required`: the field must be present. */
export interface FieldSpec {
  path: (string | number)[];
  conforms: (v: unknown) => boolean;
  required?: boolean;
}

const ID_RE = /^[A-Za-z0-9_.:-]+$/;
export const kinds = {
  id: (v: unknown) => typeof v === 'string' && v.length >= 1 && v.length <= 128 && ID_RE.test(v),
  str: (min: number, max: number) => (v: unknown) => typeof v === 'string' && v.length >= min && v.length <= max,
  num: (min: number, max: number) => (v: unknown) => typeof v === 'number' && Number.isFinite(v) && v >= min && v <= max,
  int: (min: number, max: number) => (v: unknown) => Number.isInteger(v) && (v as number) >= min && (v as number) <= max,
  bool: (v: unknown) => typeof v === 'boolean',
  oneOf: (...xs: unknown[]) => (v: unknown) => xs.includes(v),
  nullOr: (f: (v: unknown) => boolean) => (v: unknown) => v === null || f(v),
  arrayOf: (f: (v: unknown) => boolean, min = 0, max = Infinity) => (v: unknown) =>
    Array.isArray(v) && v.length >= min && v.length <= max && v.every(f),
  /** Any value is schema-valid here (the server decides on other grounds). */
  any: () => true,
};

function getPath(v: unknown, path: (string | number)[]): { present: boolean; value: unknown } {
  let cur: unknown = v;
  for (const p of path) {
    if (cur === null || typeof cur !== 'object' || !Object.prototype.hasOwnProperty.call(cur, p)) return { present: false, value: undefined };
    cur = (cur as Record<string, unknown>)[p as string];
  }
  return { present: true, value: cur };
}

/** Sets `path` in an Entries tree (last entry of a key wins, like JSON.parse); creates nothing that is missing. */
function setPath(tree: unknown, path: (string | number)[], value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path;
  if (tree instanceof Entries) {
    const entries = tree.entries.map(([k, v]) => [k, v] as [string, unknown]);
    const i = entries.map(([k]) => k).lastIndexOf(String(head));
    if (i < 0) entries.push([String(head), setPath(undefined, rest, value)]);
    else entries[i] = [entries[i][0], setPath(entries[i][1], rest, value)];
    return new Entries(entries);
  }
  if (Array.isArray(tree) && typeof head === 'number') {
    const copy = tree.slice();
    copy[head] = setPath(copy[head], rest, value);
    return copy;
  }
  return value;
}

function deletePath(tree: unknown, path: (string | number)[]): unknown {
  const [head, ...rest] = path;
  if (tree instanceof Entries) {
    if (rest.length === 0) return new Entries(tree.entries.filter(([k]) => k !== head));
    return new Entries(tree.entries.map(([k, v]) => [k, k === head ? deletePath(v, rest) : v]));
  }
  if (Array.isArray(tree) && typeof head === 'number') {
    if (rest.length === 0) return tree.filter((_, i) => i !== head);
    return tree.map((v, i) => (i === head ? deletePath(v, rest) : v));
  }
  return tree;
}

export type Mutation =
  | { kind: 'set'; field: number; value: unknown }
  | { kind: 'delete'; field: number }
  | { kind: 'duplicate'; field: number; value: unknown; hostileFirst: boolean }
  | { kind: 'proto'; depth: number; key: (typeof PROTO_KEYS)[number]; value: unknown }
  | { kind: 'extra'; key: string; value: unknown }
  | { kind: 'whole'; value: unknown };

export interface BodyCase {
  mutation: Mutation;
  bytes: Buffer;
  contentType: string;
  /** Cannot be valid: the server must answer 4xx. */
  mustReject: boolean;
  why: string;
}

export interface BodyEndpoint {
  /** The valid body the mutations start from (may vary per run, e.g. a fresh rule id). */
  base: fc.Arbitrary<Record<string, unknown>>;
  fields: FieldSpec[];
  /** additionalProperties: false (webhooks): an unknown key is a 422. */
  closed?: boolean;
}

const mutation = (ep: BodyEndpoint): fc.Arbitrary<Mutation> => {
  const field = fc.integer({ min: 0, max: ep.fields.length - 1 });
  return fc.oneof(
    { arbitrary: fc.record({ kind: fc.constant('set' as const), field, value: hostileValue }), weight: 10 },
    { arbitrary: fc.record({ kind: fc.constant('delete' as const), field }), weight: 2 },
    { arbitrary: fc.record({ kind: fc.constant('duplicate' as const), field, value: hostileValue, hostileFirst: fc.boolean() }), weight: 3 },
    {
      arbitrary: fc.record({
        kind: fc.constant('proto' as const),
        depth: fc.integer({ min: 0, max: 3 }),
        key: fc.constantFrom(...PROTO_KEYS),
        value: fc.oneof(protoObject, hostileValue),
      }),
      weight: 3,
    },
    {
      arbitrary: fc.record({ kind: fc.constant('extra' as const), key: fc.oneof(hostileString.filter((s): s is string => typeof s === 'string'), fc.string()), value: hostileValue }),
      weight: 1,
    },
    { arbitrary: fc.record({ kind: fc.constant('whole' as const), value: hostileWholeBody }), weight: 2 },
  );
};

/** Cases for one endpoint: a base body, one hostile mutation, a content type, and the verdict. */
export function bodyCases(ep: BodyEndpoint): fc.Arbitrary<BodyCase> {
  return fc
    .tuple(ep.base, mutation(ep), fc.constantFrom(...CONTENT_TYPES))
    .map(([base, m, contentType]) => {
      let tree = toTree(base);
      switch (m.kind) {
        case 'set':
          tree = setPath(tree, ep.fields[m.field].path, m.value);
          break;
        case 'delete':
          tree = deletePath(tree, ep.fields[m.field].path);
          break;
        case 'duplicate': {
          const path = ep.fields[m.field].path;
          const parentPath = path.slice(0, -1);
          const key = String(path[path.length - 1]);
          const parent = getTree(tree, parentPath);
          if (parent instanceof Entries) {
            // Hostile first: the original (later) entry wins in JSON.parse; hostile last: it wins.
            const entries = m.hostileFirst ? [[key, m.value] as [string, unknown], ...parent.entries] : [...parent.entries, [key, m.value] as [string, unknown]];
            tree = setTree(tree, parentPath, new Entries(entries));
          }
          break;
        }
        case 'proto': {
          let v: unknown = m.value;
          for (let i = 0; i < m.depth; i++) v = new Entries([[PROTO_KEYS[i % 3], v]]);
          // Into the body, or into one of its nested objects (thresholds, processors[0], ...).
          const parents = [[], ...ep.fields.filter((f) => f.path.length > 1).map((f) => f.path.slice(0, -1))];
          const parentPath = parents[(m.depth * 7 + m.key.length) % parents.length];
          const parent = getTree(tree, parentPath);
          if (parent instanceof Entries) tree = setTree(tree, parentPath, new Entries([...parent.entries, [m.key, v]]));
          break;
        }
        case 'extra':
          if (tree instanceof Entries) tree = new Entries([...tree.entries, [m.key, m.value]]);
          break;
        case 'whole':
          tree = m.value;
          break;
      }
      const bytes = render(tree);
      const { mustReject, why } = verdict(ep, bytes, m);
      const shown = () => `${m.kind} [${why}] ${contentType}: ${bytes.length > 300 ? `${bytes.subarray(0, 300).toString('utf8')}… (${bytes.length} bytes)` : bytes.toString('utf8')}`;
      return { mutation: m, bytes, contentType, mustReject, why, [fc.toStringMethod]: shown };
    });
}

function getTree(tree: unknown, path: (string | number)[]): unknown {
  let cur = tree;
  for (const p of path) {
    if (cur instanceof Entries) {
      const hit = [...cur.entries].reverse().find(([k]) => k === String(p));
      cur = hit ? hit[1] : undefined;
    } else if (Array.isArray(cur) && typeof p === 'number') cur = cur[p];
    else return undefined;
  }
  return cur;
}

function setTree(tree: unknown, path: (string | number)[], value: unknown): unknown {
  return path.length === 0 ? value : setPath(tree, path, value);
}

function verdict(ep: BodyEndpoint, bytes: Buffer, m: Mutation): { mustReject: boolean; why: string } {
  if (bytes.length === 0) return { mustReject: true, why: 'empty body' };
  if (jsonDepth(bytes) > MAX_JSON_DEPTH) return { mustReject: true, why: `nested deeper than ${MAX_JSON_DEPTH}` };
  const p = parseLikeServer(bytes);
  if (!p.ok) return { mustReject: true, why: 'not JSON' };
  const v = p.value;
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return { mustReject: true, why: 'not an object' };
  if (hasLoneSurrogate(v)) return { mustReject: true, why: 'lone surrogate' };
  for (const f of ep.fields) {
    const got = getPath(v, f.path);
    if (!got.present) {
      if (f.required && parentPresent(v, f.path)) return { mustReject: true, why: `missing ${f.path.join('.')}` };
      continue;
    }
    if (!f.conforms(got.value)) return { mustReject: true, why: `${f.path.join('.')} does not conform` };
  }
  if (ep.closed) {
    const known = new Set(ep.fields.filter((f) => f.path.length === 1).map((f) => String(f.path[0])));
    if (Object.keys(v).some((k) => !known.has(k))) return { mustReject: true, why: 'unknown key on a closed object' };
  }
  return { mustReject: false, why: m.kind };
}

function parentPresent(v: unknown, path: (string | number)[]): boolean {
  return path.length === 1 || getPath(v, path.slice(0, -1)).present;
}

// ── requests and assertions ──────────────────────────────────────────────────────────────

export async function send(
  s: TestServer,
  method: string,
  path: string,
  body?: Buffer,
  headers: Record<string, string> = {},
): Promise<TestResponse> {
  const res = await fetch(s.baseUrl + path, { method, headers, body, signal: AbortSignal.timeout(20_000) });
  const text = await res.text();
  let json: unknown;
  try {
    json = text.length > 0 ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, json, text };
}

/** A 4xx is the catalogued error; never a 5xx. */
export function expectWellFormed(r: TestResponse, context: string): void {
  if (r.status >= 500) throw new Error(`${context}: got ${r.status} ${r.text.slice(0, 300)}`);
  if (r.status >= 400) {
    const e = (r.json as { error?: { code?: unknown; message?: unknown; status?: unknown } } | undefined)?.error;
    if (!e || typeof e.code !== 'string' || typeof e.message !== 'string' || e.status !== r.status) {
      throw new Error(`${context}: ${r.status} without a catalogued JSON error: ${r.text.slice(0, 300)}`);
    }
    expect(r.headers.get('content-type') ?? '').toContain('application/json');
  }
}

/** Stored state the fuzzing must not change when it is rejected. */
export async function snapshot(s: TestServer, key: string): Promise<string> {
  const h = { 'x-api-key': key };
  const [rules, hooks, tiers, stats, events] = await Promise.all([
    send(s, 'GET', '/v1/rules', undefined, h),
    send(s, 'GET', '/v1/webhooks', undefined, h),
    send(s, 'GET', '/v1/config/tiers', undefined, h),
    send(s, 'GET', '/v1/stats', undefined, h),
    send(s, 'GET', '/v1/failover-events', undefined, h),
  ]);
  for (const r of [rules, hooks, tiers, stats, events]) expect(r.status).toBe(200);
  const st = stats.json as Record<string, unknown>;
  // `running` and the bandit's live rule count move with the engine, not with requests.
  const counters = { routed: st.transactions_routed, reported: st.transactions_reported, failovers: st.failover_events, trie: st.trie, tier: st.tier };
  return JSON.stringify({ rules: rules.json, hooks: hooks.json, tiers: tiers.json, counters, events: events.json });
}

/** Runs per endpoint, printed by `printRuns` at the end of a file. */
export const runs = new Map<string, number>();
export function countRun(name: string): void {
  runs.set(name, (runs.get(name) ?? 0) + 1);
}
export function printRuns(file: string): void {
  const rows = [...runs].map(([k, n]) => `  ${k.padEnd(58)} ${String(n).padStart(5)}`);
  console.log(`fuzz runs (${file}):\n${rows.join('\n')}\n  ${'total'.padEnd(58)} ${String([...runs.values()].reduce((a, b) => a + b, 0)).padStart(5)}`);
}

/** Default runs per property; FUZZ_RUNS overrides (e.g. FUZZ_RUNS=2000 for a longer session). */
export const FUZZ_RUNS = Number(process.env.FUZZ_RUNS ?? 300);
/** Per-test timeout that grows with FUZZ_RUNS (the suite default is 60 s). */
export const FUZZ_TIMEOUT_MS = Math.max(60_000, FUZZ_RUNS * 200);

/** Path-segment percent-encoding that also handles lone surrogates (as U+FFFD's bytes) and keeps raw escapes. */
export function encodeSegment(s: string): string {
  return [...Buffer.from(s, 'utf8')].map((b) => (/[A-Za-z0-9_.~-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`)).join('');
}

/** A hostile path segment, already encoded for the URL. */
export const hostileSegment: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: hostileString.filter((x): x is string => typeof x === 'string' && x.length > 0).map(encodeSegment), weight: 6 },
  { arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 300 }).map(encodeSegment), weight: 3 },
  { arbitrary: fc.stringMatching(/^[A-Za-z0-9_.:-]{129,400}$/), weight: 1 },
  { arbitrary: fc.stringMatching(/^[A-Za-z0-9_.:-]{1,128}$/), weight: 2 },
  {
    arbitrary: fc.constantFrom(
      '%',
      '%Z1',
      '%ED%A0%80', // encoded lone surrogate: decodeURIComponent throws
      '%C0%AF',
      '%00',
      '%2F',
      '%2F..%2F..%2Fetc%2Fpasswd',
      'a%20b',
      '__proto__',
      'constructor',
      'prototype',
      'wh_' + '0'.repeat(24),
      'wh_' + 'g'.repeat(24),
      'dlv_0',
      '*',
      '%2A',
      '..%00',
      encodeSegment('\u202e'),
      'x'.repeat(10_000),
    ),
    weight: 2,
  },
);

/** A hostile query string (without `?`). */
export function hostileQuery(names: string[]): fc.Arbitrary<string> {
  const name = fc.oneof(fc.constantFrom(...names, '__proto__', 'constructor', 'limit[]', ''), fc.string({ maxLength: 10 }).map(encodeSegment));
  const value = fc.oneof(
    fc.constantFrom('', '0', '-1', '1', '100', '1000', '1001', '1e3', '1.5', ' 5', '5 ', '0x10', 'NaN', 'Infinity', '-0', '1e400', '1e308', '9'.repeat(400), 'null', '%00', '%', '%ZZ', 'pending', 'delivered', 'failed', '0-0', '1700000000000-1', '99999999999999999-1', 'dlv_x', '50', '50.0', '+50', '.5', '5.', '1e12', '1e13'),
    hostileString.filter((x): x is string => typeof x === 'string').map(encodeSegment),
  );
  return fc.array(fc.tuple(name, value), { minLength: 0, maxLength: 4 }).map((pairs) => pairs.map(([k, v]) => `${k}=${v}`).join('&'));
}
