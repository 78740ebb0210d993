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
import { DISCARD_CAP_BYTES, MAX_JSON_DEPTH, nestedDeeperThan, readBody } from './body.js';
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
      const state = this.begin(res, req);
      this.fail(res, state, 'ANY', '/*', errors.notFound(`path ${req.getUrl()}`), performance.now());
    });
  }

  private begin(res: HttpResponse, req: HttpRequest): ResponseState {
    // `counted` is set here, not added later: one object shape for every request.
    const state: ResponseState & { counted: boolean } = { aborted: false, done: false, corsOrigin: null, counted: false };
    this.inFlight++;
    res.onAborted(() => {
      state.aborted = true;
      this.finish(state);
    });
    const origin = req.getHeader('origin');
    if (origin) state.corsOrigin = this.opts.cors.allow(origin);
    return state;
  }

  private finish(state: ResponseState & { counted?: boolean }): void {
    if (state.counted) return;
    state.counted = true;
    this.inFlight--;
    if (this.inFlight === 0 && this.idleWaiters.length > 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const w of waiters) w();
    }
  }

  private handle(
    res: HttpResponse,
    req: HttpRequest,
    template: string,
    paramNames: string[],
    byMethod: Map<string, Endpoint>,
    allowed: string[],
  ): void {
    const t0 = performance.now();
    const state = this.begin(res, req);
    const method = req.getMethod().toUpperCase();
    if (this.draining) {
      this.fail(res, state, method, template, errors.unavailable('service is shutting down'), t0, true);
      return;
    }
    if (method === 'OPTIONS') {
      const headers: Record<string, string> = { Allow: allowed.join(', ') };
      if (state.corsOrigin !== null) {
        Object.assign(headers, CorsPolicy.preflightHeaders, { 'Access-Control-Allow-Methods': allowed.join(', ') });
      }
      send(res, state, 204, '', 'text/plain', headers);
      this.done(state, method, template, 204, t0);
      return;
    }
    const ep = byMethod.get(method);
    if (!ep) {
      this.fail(res, state, method, template, errors.methodNotAllowed(method, allowed), t0);
      return;
    }
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
    let grant: KeyGrant = DEV_GRANT;
    if (ep.auth && this.opts.apiKeys) {
      const key = req.getHeader('x-api-key');
      const g = key ? this.opts.apiKeys.lookup(key) : null;
      if (!g) {
        this.fail(res, state, method, template, errors.unauthorized(!key), t0);
        return;
      }
      grant = g;
    }
    if (ep.auth && this.opts.rateLimiter.active) {
      const rl = this.opts.rateLimiter.take(grant.tenantId);
      if (!rl.ok) {
        this.fail(res, state, method, template, errors.rateLimited(rl.retryAfterS, rl.rps, grant.tenantId), t0);
        return;
      }
    }
    const ctx = new RequestCtx(method as Method, template, params, query, grant);
    if (ep.headers !== undefined) {
      const h: Record<string, string> = {};
      for (const name of ep.headers) h[name] = req.getHeader(name);
      ctx.headers = h;
    }
    if (!BODY_METHODS.has(method)) {
      this.run(res, state, ep, ctx, undefined, t0);
      return;
    }
    if (conflictingContentLength(req)) {
      // Closed at once, without an answer: see content-length.ts for why no 400 can be sent.
      state.done = true;
      res.close();
      this.done(state, method, template, 400, t0);
      return;
    }
    // An oversized body is read and discarded up to DISCARD_CAP_BYTES, then answered 413 and
    // the connection closed (see body.ts); one declared larger than that is refused at once.
    const declared = Number(req.getHeader('content-length') || '0');
    if (declared > DISCARD_CAP_BYTES) {
      this.fail(res, state, method, template, errors.tooLarge(this.opts.maxBodyBytes), t0, true);
      return;
    }
    // Slow clients: a body still incomplete at the deadline is answered 408 (413 if it is
    // already over the limit) and the connection closed. The timer starts only once a body
    // spans several chunks (single-chunk bodies, the route path's case, need none); a client
    // that sends nothing is closed by uWS's idle timeout.
    let deadline: ReturnType<typeof setTimeout> | undefined;
    const onPartial = () => {
      deadline = setTimeout(
        () => this.fail(res, state, method, template, reader.oversized ? errors.tooLarge(this.opts.maxBodyBytes) : errors.requestTimeout(), t0, true),
        this.opts.requestTimeoutMs,
      );
    };
    const reader = readBody(res, this.opts.maxBodyBytes, onPartial, (r) => {
      if (deadline) clearTimeout(deadline);
      if (state.done || state.aborted) return;
      if (!r.ok) {
        this.fail(res, state, method, template, errors.tooLarge(this.opts.maxBodyBytes), t0, true);
        return;
      }
      let parsed: unknown = undefined;
      if (ep.body) {
        if (r.body.length === 0) {
          this.fail(res, state, method, template, errors.field('body', 'a JSON object is required'), t0);
          return;
        }
        if (nestedDeeperThan(r.body, MAX_JSON_DEPTH)) {
          this.fail(res, state, method, template, errors.field('body', `nested deeper than ${MAX_JSON_DEPTH} levels`), t0);
          return;
        }
        let text: string;
        try {
          text = r.body.toString('utf8');
          parsed = JSON.parse(text);
        } catch (e) {
          this.fail(res, state, method, template, errors.malformedJson((e as Error).message), t0);
          return;
        }
        if (mayHoldLoneSurrogate(text)) {
          const at = loneSurrogatePath(parsed);
          if (at !== null) {
            this.fail(res, state, method, template, errors.field(at, 'contains a lone UTF-16 surrogate (not valid Unicode)'), t0);
            return;
          }
        }
        try {
          parsed = ep.body.parse(parsed);
        } catch (e) {
          this.fail(res, state, method, template, e, t0);
          return;
        }
      }
      this.run(res, state, ep, ctx, parsed, t0);
    });
  }

  private run(res: HttpResponse, state: ResponseState, ep: Endpoint, ctx: Ctx, body: unknown, t0: number): void {
    let out: Reply | Promise<Reply>;
    try {
      out = ep.handler(ctx, body);
    } catch (e) {
      this.fail(res, state, ctx.method, ctx.template, e, t0);
      return;
    }
    if (out instanceof Promise) {
      // A handler that does not answer in time gets a 503; its late result is dropped.
      const timer = setTimeout(
        () => this.fail(res, state, ctx.method, ctx.template, errors.unavailable('the request took too long; retry'), t0),
        this.opts.requestTimeoutMs,
      );
      out.then(
        (r) => {
          clearTimeout(timer);
          this.reply(res, state, ctx, r, t0);
        },
        (e) => {
          clearTimeout(timer);
          this.fail(res, state, ctx.method, ctx.template, e, t0);
        },
      );
    } else {
      this.reply(res, state, ctx, out, t0);
    }
  }

  private reply(res: HttpResponse, state: ResponseState, ctx: Ctx, r: Reply, t0: number): void {
    if (state.done || state.aborted) return;
    if (r.stream !== undefined) {
      // Large bodies: written as the client reads them; the request ends with the stream.
      sendStream(res, state, r.status, r.contentType ?? 'application/json', r.headers, r.stream, () => this.done(state, ctx.method, ctx.template, r.status, t0));
      return;
    }
    let body: string | Buffer;
    if (r.body === undefined) body = '';
    else if (typeof r.body === 'string' || Buffer.isBuffer(r.body)) body = r.body;
    else body = JSON.stringify(r.body);
    send(res, state, r.status, body, r.contentType ?? 'application/json', r.headers);
    this.done(state, ctx.method, ctx.template, r.status, t0);
  }

  private fail(
    res: HttpResponse,
    state: ResponseState,
    method: string,
    template: string,
    err: unknown,
    t0: number,
    closeConnection = false,
  ): void {
    if (state.done || state.aborted) return;
    if (!(err instanceof ServiceError)) this.opts.onInternalError(err, method, template);
    const { status, body, headers } = errorBody(err);
    send(res, state, status, body, 'application/json', headers, closeConnection);
    this.done(state, method, template, status, t0);
  }

  private done(state: ResponseState, method: string, template: string, status: number, t0: number): void {
    this.finish(state);
    this.opts.observe(method, template, status, (performance.now() - t0) / 1000);
  }
}
