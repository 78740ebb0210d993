/**
 * Mounts endpoints on a uWS app. Per request: copy what is needed out of `req` before
 * anything asynchronous (uWS invalidates it after the callback), register onAborted first,
 * authenticate before reading the body, enforce the body limit, parse, validate, run the
 * handler, and write the reply or the catalogued error. Wrong method → 405 with Allow,
 * unknown path → 404, OPTIONS → CORS preflight.
 */
import type { HttpRequest, HttpResponse, TemplatedApp } from '@trufflesuite/uws-js-unofficial';
import { errorBody, errors, ServiceError } from '../errors.js';
import type { ApiKeyTable, KeyGrant } from './api-keys.js';
import { DISCARD_CAP_BYTES, MAX_JSON_DEPTH, nestedDeeperThan, readBody, type BodyResult } from './body.js';
import { CorsPolicy } from './cors.js';
import type { Ctx, Endpoint, Method, Reply } from './endpoint.js';
import { enterUwsCallback, leaveUwsCallback, send, type ResponseState } from './reply.js';
import { sendStream } from './stream-reply.js';
import { conflictingContentLength } from './content-length.js';
import type { RateLimiter } from './rate-limit.js';
import { loneSurrogatePath, mayHoldLoneSurrogate } from './unicode.js';

export interface RouterOptions {
  apiKeys: ApiKeyTable | null;
  cors: CorsPolicy;
  maxBodyBytes: number;
  /** Per-tenant request limits (opt-in; inactive while no tenant has one). */
  rateLimiter: RateLimiter;
  /** A request whose body has not fully arrived, or whose handler has not answered, by then gets 408/503. */
  requestTimeoutMs: number;
  /** Called once per answered request, for metrics. */
  observe(method: string, template: string, status: number, seconds: number): void;
  /** Called for unexpected handler failures (already answered with a generic 500). */
  onInternalError(err: unknown, method: string, template: string): void;
}

const DEV_GRANT: KeyGrant = Object.freeze({ tenantId: 'default', admin: true });
/** One instance for every request refused while draining (nothing in it varies). */
const SHUTTING_DOWN = errors.unavailable('service is shutting down');

/**
 * Whether answering `err` closes the connection: when the request's body was not read to its
 * end (413, 408) the rest of the bytes cannot be told from a next request; while shutting
 * down, the client is sent to reconnect (to another instance).
 */
function closesConnection(err: unknown): boolean {
  return err === SHUTTING_DOWN || (err instanceof ServiceError && (err.code === 'PAYLOAD_TOO_LARGE' || err.code === 'REQUEST_TIMEOUT'));
}

/** One request as the router tracks it: its reply state (for reply.ts) and what it is observed under. */
interface Exchange extends ResponseState {
  readonly res: HttpResponse;
  readonly method: string;
  /** Path template, the metrics label ('/*' for an unknown path). */
  readonly template: string;
  /** When the request arrived (performance.now()). */
  readonly t0: number;
  /** Taken off the in-flight count (once: answered or aborted). */
  counted: boolean;
}
const NO_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;

/** A request's context; the query string is parsed only if a handler asks for it. */
class RequestCtx implements Ctx {
  private parsedQuery: URLSearchParams | null = null;
  constructor(
    readonly method: Method,
    readonly template: string,
    readonly params: Record<string, string>,
    private readonly rawQuery: string | undefined,
    readonly grant: KeyGrant,
  ) {}
  declare headers?: Record<string, string>; // set only for endpoints that ask (no field per request otherwise)
  get query(): URLSearchParams {
    return (this.parsedQuery ??= new URLSearchParams(this.rawQuery ?? ''));
  }
}
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export class Router {
  private inFlight = 0;
  private draining = false;
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly opts: RouterOptions) {}

  /** Stop taking new requests (503) and resolve once in-flight ones have been answered. */
  drain(): Promise<void> {
    this.draining = true;
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  mount(app: TemplatedApp, endpoints: Endpoint[]): void {
    const byPath = new Map<string, Endpoint[]>();
    for (const e of endpoints) {
      const list = byPath.get(e.path) ?? [];
      list.push(e);
      byPath.set(e.path, list);
    }
    for (const [template, list] of byPath) {
      const paramNames = [...template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
      const pattern = template.replace(/\{([^}]+)\}/g, ':$1');
      const byMethod = new Map<string, Endpoint>(list.map((e) => [e.method, e]));
      const allowed = [...byMethod.keys(), 'OPTIONS'];
      app.any(pattern, (res, req) => {
        enterUwsCallback();
        try {
          this.handle(res, req, template, paramNames, byMethod, allowed);
        } finally {
          leaveUwsCallback();
        }
      });
    }
    app.any('/*', (res, req) => {
      const x = this.begin(res, req, 'ANY', '/*', performance.now());
      this.fail(x, errors.notFound(`path ${req.getUrl()}`));
    });
  }

  private begin(res: HttpResponse, req: HttpRequest, method: string, template: string, t0: number): Exchange {
    // Every field is set here, none added later: one object shape for every request.
    const x: Exchange = { aborted: false, done: false, corsOrigin: null, counted: false, res, method, template, t0 };
    this.inFlight++;
    res.onAborted(() => {
      x.aborted = true;
      this.finish(x);
    });
    const origin = req.getHeader('origin');
    if (origin) x.corsOrigin = this.opts.cors.allow(origin);
    return x;
  }

  private finish(x: Exchange): void {
    if (x.counted) return;
    x.counted = true;
    this.inFlight--;
    if (this.inFlight === 0 && this.idleWaiters.length > 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const w of waiters) w();
    }
  }

  /**
   * Every early exit is a ServiceError handed to fail(): the checks below either pass or
   * name the error that answers the request (status, code, message and headers come from the
   * error catalog; whether the connection closes, from closesConnection()).
   */
  private handle(
    res: HttpResponse,
    req: HttpRequest,
    template: string,
    paramNames: string[],
    byMethod: Map<string, Endpoint>,
    allowed: string[],
  ): void {
    const t0 = performance.now();
    const x = this.begin(res, req, req.getMethod().toUpperCase(), template, t0);
    const method = x.method;
    if (this.draining) return this.fail(x, SHUTTING_DOWN);
    if (method === 'OPTIONS') return this.preflight(x, allowed);
    const ep = byMethod.get(method);
    if (!ep) return this.fail(x, errors.methodNotAllowed(method, allowed));
    const params: Record<string, string> = paramNames.length === 0 ? NO_PARAMS : {};
    for (let i = 0; i < paramNames.length; i++) {
      let v = req.getParameter(i);
      try {
        v = decodeURIComponent(v);
      } catch {
        // keep the raw value; validation below reports it
      }
      params[paramNames[i]] = v;
    }
    const query = req.getQuery();
    const grant = this.authorize(req, ep);
    if (grant instanceof ServiceError) return this.fail(x, grant);
    const ctx = new RequestCtx(method as Method, template, params, query, grant);
    if (ep.headers !== undefined) {
      const h: Record<string, string> = {};
      for (const name of ep.headers) h[name] = req.getHeader(name);
      ctx.headers = h;
    }
    if (!BODY_METHODS.has(method)) return this.run(x, ep, ctx, undefined);
    if (conflictingContentLength(req)) {
      // Closed at once, without an answer: see content-length.ts for why no 400 can be sent.
      x.done = true;
      res.close();
      return this.done(x, 400);
    }
    // An oversized body is read and discarded up to DISCARD_CAP_BYTES, then answered 413 and
    // the connection closed (see body.ts); one declared larger than that is refused at once.
    const declared = Number(req.getHeader('content-length') || '0');
    if (declared > DISCARD_CAP_BYTES) return this.fail(x, errors.tooLarge(this.opts.maxBodyBytes));
    // Slow clients: a body still incomplete at the deadline is answered 408 (413 if it is
    // already over the limit) and the connection closed. The timer starts only once a body
    // spans several chunks (single-chunk bodies, the route path's case, need none); a client
    // that sends nothing is closed by uWS's idle timeout.
    let deadline: ReturnType<typeof setTimeout> | undefined;
    const onPartial = () => {
      deadline = setTimeout(
        () => this.fail(x, reader.oversized ? errors.tooLarge(this.opts.maxBodyBytes) : errors.requestTimeout()),
        this.opts.requestTimeoutMs,
      );
    };
    const reader = readBody(res, this.opts.maxBodyBytes, onPartial, (r) => {
      if (deadline) clearTimeout(deadline);
      if (x.done || x.aborted) return;
      let body: unknown;
      try {
        body = decodeBody(ep, r, this.opts.maxBodyBytes);
      } catch (e) {
        return this.fail(x, e);
      }
      this.run(x, ep, ctx, body);
    });
  }

  /** CORS preflight: 204 with Allow (and the CORS headers for an allowed origin). */
  private preflight(x: Exchange, allowed: string[]): void {
    const headers: Record<string, string> = { Allow: allowed.join(', ') };
    if (x.corsOrigin !== null) {
      Object.assign(headers, CorsPolicy.preflightHeaders, { 'Access-Control-Allow-Methods': allowed.join(', ') });
    }
    send(x.res, x, 204, '', 'text/plain', headers);
    this.done(x, 204);
  }

  /** The caller's grant, or why it is refused: 401 (no or unknown API key), 429 (its tenant is over its rate). */
  private authorize(req: HttpRequest, ep: Endpoint): KeyGrant | ServiceError {
    if (!ep.auth) return DEV_GRANT;
    let grant = DEV_GRANT;
    if (this.opts.apiKeys) {
      const key = req.getHeader('x-api-key');
      const g = key ? this.opts.apiKeys.lookup(key) : null;
      if (!g) return errors.unauthorized(!key);
      grant = g;
    }
    if (this.opts.rateLimiter.active) {
      const rl = this.opts.rateLimiter.take(grant.tenantId);
      if (!rl.ok) return errors.rateLimited(rl.retryAfterS, rl.rps, grant.tenantId);
    }
    return grant;
  }

  private run(x: Exchange, ep: Endpoint, ctx: Ctx, body: unknown): void {
    let out: Reply | Promise<Reply>;
    try {
      out = ep.handler(ctx, body);
    } catch (e) {
      return this.fail(x, e);
    }
    if (out instanceof Promise) {
      // A handler that does not answer in time gets a 503; its late result is dropped.
      const timer = setTimeout(() => this.fail(x, errors.unavailable('the request took too long; retry')), this.opts.requestTimeoutMs);
      out.then(
        (r) => {
          clearTimeout(timer);
          this.reply(x, r);
        },
        (e) => {
          clearTimeout(timer);
          this.fail(x, e);
        },
      );
    } else {
      this.reply(x, out);
    }
  }

  private reply(x: Exchange, r: Reply): void {
    if (x.done || x.aborted) return;
    if (r.stream !== undefined) {
      // Large bodies: written as the client reads them; the request ends with the stream.
      sendStream(x.res, x, r.status, r.contentType ?? 'application/json', r.headers, r.stream, () => this.done(x, r.status));
      return;
    }
    let body: string | Buffer;
    if (r.body === undefined) body = '';
    else if (typeof r.body === 'string' || Buffer.isBuffer(r.body)) body = r.body;
    else body = JSON.stringify(r.body);
    send(x.res, x, r.status, body, r.contentType ?? 'application/json', r.headers);
    this.done(x, r.status);
  }

  /** Answers the request with the catalogued error `err` (an unexpected one: a logged, generic 500). */
  private fail(x: Exchange, err: unknown): void {
    if (x.done || x.aborted) return;
    if (!(err instanceof ServiceError)) this.opts.onInternalError(err, x.method, x.template);
    const { status, body, headers } = errorBody(err);
    send(x.res, x, status, body, 'application/json', headers, closesConnection(err));
    this.done(x, status);
  }

  private done(x: Exchange, status: number): void {
    this.finish(x);
    this.opts.observe(x.method, x.template, status, (performance.now() - x.t0) / 1000);
  }
}

/**
 * The request body for `ep`: read within the limit, JSON of bounded depth without lone
 * surrogates, validated by the endpoint's schema. Throws the error that answers it (413, 422
 * naming the field, 400 for malformed JSON); undefined for an endpoint that takes no body.
 */
function decodeBody(ep: Endpoint, r: BodyResult, maxBodyBytes: number): unknown {
  if (!r.ok) throw errors.tooLarge(maxBodyBytes);
  if (!ep.body) return undefined;
  if (r.body.length === 0) throw errors.field('body', 'a JSON object is required');
  if (nestedDeeperThan(r.body, MAX_JSON_DEPTH)) throw errors.field('body', `nested deeper than ${MAX_JSON_DEPTH} levels`);
  let text: string;
  let parsed: unknown;
  try {
    text = r.body.toString('utf8');
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
