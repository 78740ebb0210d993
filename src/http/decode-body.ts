/**
 * Turning a read request body into the endpoint's validated value, for the router's generic
 * path and its fast path alike (router.ts, hot-path.ts): one place decides what a body means
 * and which error refuses it.
 */
import { errors } from '../errors.js';
import { MAX_JSON_DEPTH, nestedDeeperThan } from './body.js';
import type { Endpoint } from './endpoint.js';
import { FlatKeys, parseFlatJson } from './flat-json.js';
import { decodePlainBody } from './plain-body.js';
import type { PlainForm } from '../schemas/hot-bodies.js';
import { loneSurrogatePath, mayHoldLoneSurrogate } from './unicode.js';

/**
 * An endpoint as mounted: with the keys of its body when it asked for flat-json.ts (`flatBody`),
 * and the plain form of its body when it has one (plain-body.ts).
 */
export interface Mounted {
  ep: Endpoint;
  flat: FlatKeys | null;
  plain: PlainForm<unknown> | null;
}

export function mounted(ep: Endpoint): Mounted {
  const props = ep.flatBody && ep.body ? (ep.body.schema.properties as Record<string, unknown> | undefined) : undefined;
  return { ep, flat: props ? new FlatKeys(Object.keys(props)) : null, plain: props && ep.plainBody ? ep.plainBody : null };
}

/**
 * The request body for the endpoint: read within the limit (null: it was not), JSON of bounded
 * depth without lone surrogates, validated by the endpoint's schema. Throws the error that
 * answers it (413, 422 naming the field, 400 for malformed JSON); undefined for an endpoint
 * that takes no body. A body in its endpoint's plain form (plain-body.ts) is read and checked
 * in one pass; one in the flat form (flat-json.ts) skips the depth scan, JSON.parse and the
 * surrogate check, none of which could refuse it, and meets the same validator.
 */
export function decodeBody({ ep, flat, plain }: Mounted, body: Buffer | null, maxBodyBytes: number): unknown {
  if (body === null) throw errors.tooLarge(maxBodyBytes);
  if (!ep.body) return undefined;
  if (plain !== null) {
    const value = decodePlainBody(plain, body);
    if (value !== undefined) return value;
  }
  if (flat !== null) {
    const parsed = parseFlatJson(body, flat);
    if (parsed !== undefined) return ep.body.parse(parsed);
  }
  if (body.length === 0) throw errors.field('body', 'a JSON object is required');
  if (nestedDeeperThan(body, MAX_JSON_DEPTH)) throw errors.field('body', `nested deeper than ${MAX_JSON_DEPTH} levels`);
  let text: string;
  let parsed: unknown;
  try {
    text = body.toString('utf8');
    parsed = JSON.parse(text);
  } catch (e) {
    throw errors.malformedJson((e as Error).message);
  }
  if (mayHoldLoneSurrogate(text)) {
    const at = loneSurrogatePath(parsed);
    if (at !== null) throw errors.field(at, 'contains a lone UTF-16 surrogate (not valid Unicode)');
  }
  return ep.body.parse(parsed);
}
