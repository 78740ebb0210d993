/** What a resource module declares: one endpoint per method and path template. */
import type { Static, TSchema } from '@sinclair/typebox';
import type { ErrorSchema, Validator } from '../schemas/common.js';
import type { PlainForm } from '../schemas/hot-bodies.js';
import type { ErrorCode } from '../errors.js';
import type { KeyGrant } from './api-keys.js';

export type Method = 'GET' | 'POST' | 'DELETE' | 'PUT' | 'PATCH';

export interface Ctx {
  method: Method;
  /** Path template, e.g. /v1/rules/{rule_id}: the metrics label. */
  template: string;
  params: Record<string, string>;
  /** Parsed on first use. */
  readonly query: URLSearchParams;
  /** The caller's tenant (and admin flag); `default` in development mode. */
  grant: KeyGrant;
  /** The request headers the endpoint asked for (`Endpoint.headers`), lower-case names; '' when absent. */
  headers?: Record<string, string>;
}

export interface Reply {
  status: number;
  /** An object is serialized as JSON; a string or Buffer is sent as is. */
  body?: unknown;
  contentType?: string;
  headers?: Record<string, string>;
  /**
   * A large body, produced piece by piece as the client reads it (instead of `body`): see
   * stream-reply.ts. Chunks are produced only while the socket takes them, so a slow reader
   * holds about one chunk of memory, and production yields the event loop between slices.
   */
  stream?: Iterator<string | Buffer>;
}

export interface QueryParamDoc {
  name: string;
  description: string;
  schema: Record<string, unknown>;
}

/**
 * One documented response. The type forces an example wherever there is a body: a JSON body
 * names its schema and a realistic example (use `jsonBody` to have the example checked against
 * the schema by the compiler); an error names the catalogued code it answers with (the example
 * is generated from it); another media type gives its content type and an example text.
 */
export type ResponseDoc =
  | { description: string; schema: TSchema; example: unknown }
  | { description: string; schema: typeof ErrorSchema; error: ErrorCode }
  | { description: string; contentType: string; example: string }
  | { description: string; schema?: never; example?: never; error?: never; contentType?: never };

/** A JSON response whose example the compiler checks against the schema. */
export function jsonBody<S extends TSchema>(description: string, schema: S, example: Static<S>): ResponseDoc {
  return { description, schema, example };
}

export interface EndpointDoc {
  summary: string;
  tag: string;
  /**
   * Unique across the API, lowerCamelCase: the method name a generated client gives this
   * operation (e.g. `routePayment`).
   */
  operationId: string;
  description?: string;
  query?: QueryParamDoc[];
  /**
   * False for a method other than GET that never writes the store (the route and outcome hot
   * path): it cannot answer 507. Every other POST, PUT, PATCH and DELETE is documented with 507.
   */
  writesStore?: false;
  /** Example values of path parameters, by name (a generated "Try it out" default). */
  pathExamples?: Record<string, string>;
  /**
   * Only the endpoint's own statuses: 400, 401, 408, 413, 422 (body), 429 and 503, which the
   * router answers for every endpoint that can meet them, are added by the OpenAPI generator.
   */
  responses: Record<number, ResponseDoc>;
}

/** Asset and alias routes, left out of the OpenAPI document. */
export interface HiddenDoc {
  hidden: true;
}

interface EndpointBase<B> {
  method: Method;
  path: string;
  /** Needs an API key when authentication is enabled (every /v1/ path). */
  auth: boolean;
  handler(ctx: Ctx, body: B): Reply | Promise<Reply>;
  /** Request headers (lower-case) the handler reads: copied into `ctx.headers` (only for this endpoint). */
  headers?: readonly string[];
  /**
   * Its body is usually a flat object of simple values (the hot path's): the router parses it
   * with flat-json.ts and takes JSON.parse only for a body in any other form.
   */
  flatBody?: true;
  /**
   * With flatBody: the body's plain form (src/schemas/hot-bodies.ts), read and checked from its
   * bytes in one pass (plain-body.ts) before the flat parser is tried.
   */
  plainBody?: PlainForm<B>;
}

/** An endpoint with a JSON body documents an example the server accepts (typed as the body). */
export type Endpoint<B = unknown> = EndpointBase<B> &
  ({ body: Validator<B>; doc: EndpointDoc & { requestExample: B } } | { body?: undefined; doc: EndpointDoc | HiddenDoc });

export function endpoint<B>(e: Endpoint<B>): Endpoint<unknown> {
  return e as Endpoint<unknown>;
}

export function isHidden(doc: EndpointDoc | HiddenDoc): doc is HiddenDoc {
  return 'hidden' in doc && doc.hidden === true;
}
