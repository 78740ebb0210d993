/**
 * Mounts endpoints on a uWS app. Per request: copy what is needed out of `req` before
 * anything asynchronous (uWS invalidates it after the callback), register onAborted first,
 * authenticate before reading the body, enforce the body limit, parse, validate, run the
 * handler, and write the reply or the catalogued error. Wrong method → 405 with Allow,
 * unknown path → 404, OPTIONS → CORS preflight. POSTs to the hot endpoints in their usual
 * form take a fast path (serveHot, hot-path.ts) with the same decoding, handler and replies.
 */
import { Buffer } from 'node:buffer';
// Imported, not the globals: Node defines globalThis.performance and globalThis.Buffer as
// accessors, so each use of the global in optimized code is a generic global load and a getter
// call (per request on the route path); a module binding is a constant.
import { performance } from 'node:perf_hooks';
import type { HttpRequest, HttpResponse, TemplatedApp } from '@trufflesuite/uws-js-unofficial';
import { errorBody, errors, ServiceError } from '../errors.js';
import type { ApiKeyTable, KeyGrant } from './api-keys.js';
import { DEV_GRANT, NO_PARAMS, RequestCtx, type Exchange, type RequestObserver } from './exchange.js';
import { DISCARD_CAP_BYTES, readBody } from './body.js';
import { CorsPolicy } from './cors.js';
import type { Ctx, Endpoint, Method, Reply } from './endpoint.js';
import { enterUwsCallback, leaveUwsCallback, send } from './reply.js';
import { sendStream } from './stream-reply.js';
import { conflictingContentLength, contentLengthValue, scannedApiKey, scannedContentLength } from './content-length.js';
import { decodeBody, mounted, type Mounted } from './decode-body.js';
import { HotExchange, type ExchangeHost } from './hot-path.js';
import type { RateLimiter } from './rate-limit.js';

export interface RouterOptions {
  apiKeys: ApiKeyTable | null;
  cors: CorsPolicy;
  maxBodyBytes: number;
  /** Per-tenant request limits (opt-in; inactive while no tenant has one). */
  rateLimiter: RateLimiter;
  /** A request whose body has not fully arrived, or whose handler has not answered, by then gets 408/503. */
  requestTimeoutMs: number;
  /** Where answered requests of (method, path template) are counted (metrics); the hot path's are looked up once. */
  requestSeries(method: string, template: string): RequestObserver;
  /** Called for unexpected handler failures (already answered with a generic 500). */
  onInternalError(err: unknown, method: string, template: string): void;
}

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

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Hot-path exchanges kept for reuse (hot-path.ts); more are made while more requests are in flight. */
export const MAX_POOLED_HOT_EXCHANGES = 1024;

export class Router implements ExchangeHost {
  private inFlight = 0;
  /** Idle hot-path exchanges, each answered and ready for another request. */
  private readonly hotExchanges: HotExchange[] = [];
  /** How many hot-path exchanges were ever made (tests: reuse keeps it near the requests in flight). */
  readonly hotStats = { created: 0 };
  /** The endpoints mounted on the hot path (their bodies are what the front thread's warm-up decodes). */
  readonly hotTargets: Mounted[] = [];
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
      const byMethod = new Map<string, Mounted>(list.map((e) => [e.method, mounted(e)]));
      const allowed = [...byMethod.keys(), 'OPTIONS'];
      app.any(pattern, (res, req) => {
        enterUwsCallback();
        try {
          this.handle(res, req, template, paramNames, byMethod, allowed);
        } finally {
          leaveUwsCallback();
        }
      });
      // The hot endpoint's POSTs come here first (uWS prefers a method's handler to any()).
      const hot = byMethod.get('POST');
      if (hot?.flat && paramNames.length === 0 && hot.ep.headers === undefined) {
        this.hotTargets.push(hot);
        const series = this.opts.requestSeries('POST', template);
        app.post(pattern, (res, req) => {
          enterUwsCallback();
          try {
            if (!this.serveHot(res, req, template, hot, series)) this.handle(res, req, template, paramNames, byMethod, allowed);
          } finally {
            leaveUwsCallback();
          }
        });
      }
    }
    app.any('/*', (res, req) => {
      const x = this.begin(res, req, 'ANY', '/*', performance.now());
      if (conflictingContentLength(req)) return this.refuseConflictingLength(x);
      this.fail(x, errors.notFound(`path ${req.getUrl()}`));
    });
  }

  private begin(res: HttpResponse, req: HttpRequest, method: string, template: string, t0: number): Exchange {
    // Every field is set here, none added later: one object shape for every request.
    const x: Exchange = { aborted: false, done: false, corsOrigin: null, counted: false, res, method, template, t0, series: null };
    this.inFlight++;
    res.onAborted(() => this.abort(x));
    // With CORS off (the default) the Origin header changes nothing: not read.
    if (this.opts.cors.enabled) {
      const origin = req.getHeader('origin');
      if (origin) x.corsOrigin = this.opts.cors.allow(origin);
    }
    return x;
  }

  /**
   * The fast path (hot-path.ts) for a POST to a hot endpoint in its usual form; false leaves
   * the request to handle(), untouched: draining, rate limits on, a CORS origin, a missing or
   * unknown API key (401), a query string, a Content-Length over the limit or given twice.
   */
  private serveHot(res: HttpResponse, req: HttpRequest, template: string, target: Mounted, series: RequestObserver): boolean {
    const t0 = performance.now();
    const opts = this.opts;
    if (this.draining || opts.rateLimiter.active) return false;
    if (opts.cors.enabled && req.getHeader('origin') !== '') return false;
    if (conflictingContentLength(req) || contentLengthValue(scannedContentLength()) > opts.maxBodyBytes) return false;
    let grant = DEV_GRANT;
    if (target.ep.auth && opts.apiKeys !== null) {
      const key = scannedApiKey();
      const g = key === '' ? null : opts.apiKeys.lookup(key);
      if (g === null) return false;
      grant = g;
    }
    if (req.getQuery()) return false;
    let x = this.hotExchanges.pop();
    if (x === undefined) {
      x = new HotExchange(this);
      this.hotStats.created++;
    }
    x.begin(target, res, template, t0, grant, series);
    this.inFlight++;
    res.onAborted(x.onAborted);
    res.onData(x.onData);
    return true;
  }

  abort(x: Exchange): void {
    x.aborted = true;
    this.finish(x);
  }

  recycle(x: HotExchange): void {
    if (this.hotExchanges.length < MAX_POOLED_HOT_EXCHANGES) this.hotExchanges.push(x);
  }

  get maxBodyBytes(): number {
    return this.opts.maxBodyBytes;
  }

  get requestTimeoutMs(): number {
    return this.opts.requestTimeoutMs;
  }

  /** Takes an answered or aborted request off the in-flight count (once). */
  finish(x: Exchange): void {
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
    byMethod: Map<string, Mounted>,
    allowed: string[],
  ): void {
    const t0 = performance.now();
    const x = this.begin(res, req, req.getMethod().toUpperCase(), template, t0);
    const method = x.method;
    // Before any answer, whatever the method: uWS frames a body by the first Content-Length on
    // every request, so a 404, 405, 401, 503 or preflight answered here would otherwise be
    // followed by the smuggled request behind the shorter body.
    if (conflictingContentLength(req)) return this.refuseConflictingLength(x);
    if (this.draining) return this.fail(x, SHUTTING_DOWN);
    if (method === 'OPTIONS') return this.preflight(x, allowed);
    const m = byMethod.get(method);
    if (!m) return this.fail(x, errors.methodNotAllowed(method, allowed));
    const ep = m.ep;
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
    // An oversized body is read and discarded up to DISCARD_CAP_BYTES, then answered 413 and
    // the connection closed (see body.ts); one declared larger than that is refused at once.
    const declared = contentLengthValue(req.getHeader('content-length'));
    if (declared > DISCARD_CAP_BYTES) return this.fail(x, errors.tooLarge(this.opts.maxBodyBytes));
    // Slow clients: a body still incomplete at the deadline is answered 408 (413 if it is
    // already over the limit) and the connection closed. The timer starts only once a body
    // spans several chunks (single-chunk bodies, the route path's case, need none); a client
    // that sends nothing is closed by uWS's idle timeout.
    let deadline: ReturnType<typeof setTimeout> | undefined;
    const reader = readBody(res, this.opts.maxBodyBytes, {
      bodyPartial: () => {
        deadline = setTimeout(
          () => this.fail(x, reader.oversized ? errors.tooLarge(this.opts.maxBodyBytes) : errors.requestTimeout()),
          this.opts.requestTimeoutMs,
        );
      },
      bodyDone: (b) => {
        if (deadline) clearTimeout(deadline);
        if (x.done || x.aborted) return;
        let body: unknown;
        try {
          body = decodeBody(m, b, this.opts.maxBodyBytes);
        } catch (e) {
          return this.fail(x, e);
        }
        this.run(x, ep, ctx, body);
      },
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

  /** Runs the handler and answers with its reply (the generic path; hot-path.ts runs its own). */
  private run(x: Exchange, ep: Endpoint, ctx: Ctx, body: unknown): void {
    let out: Reply | Promise<Reply>;
    try {
      out = ep.handler(ctx, body);
    } catch (e) {
      return this.fail(x, e);
    }
    this.settle(x, out);
  }

  /** Answers with a handler's reply, now or when its promise settles (also for hot-path.ts). */
  settle(x: Exchange, out: Reply | Promise<Reply>): void {
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
  fail(x: Exchange, err: unknown): void {
    if (x.done || x.aborted) return;
    if (!(err instanceof ServiceError)) this.opts.onInternalError(err, x.method, x.template);
    const { status, body, headers } = errorBody(err);
    send(x.res, x, status, body, 'application/json', headers, closesConnection(err));
    this.done(x, status);
  }

  /** Two different Content-Length headers: the connection is closed at once, without an answer (content-length.ts says why no 400 can be sent); counted as a 400. */
  private refuseConflictingLength(x: Exchange): void {
    x.done = true;
    x.res.close();
    this.done(x, 400);
  }

  private done(x: Exchange, status: number): void {
    this.finish(x);
    (x.series ?? this.opts.requestSeries(x.method, x.template)).observe(status, (performance.now() - x.t0) / 1000);
  }
}
