/**
 * The router's fast path for the hot endpoints (those with `flatBody`: POST /v1/route and
 * POST /v1/outcome). The router hands a request here only in its usual form (see
 * Router.serveHot: not draining, no rate limits, no CORS origin, a known API key, no query
 * string, a Content-Length within the limit); everything else takes the generic path from the
 * start. Here one object, HotExchange, is at once the request's reply state (Exchange), the
 * handler's context (Ctx) and the sink of its body (BodySink): the generic path's separate
 * exchange, context, per-stage closures and result objects cost about a kilobyte of garbage
 * per request, which at 100,000 rules pushes the routing data out of the cache. The body then
 * takes the same decoding, validation and handler as on the generic path; the usual answer
 * (a JSON body, no header of its own) is written here with the same status line and
 * Content-Type bytes as reply.ts's (answer() says why), every other one by the router, so
 * every answer is the same.
 *
 * The objects are reused: a HotExchange, its BodyReader and the two callbacks uWS is given
 * (onData, onAborted) are made once and serve request after request. At saturation the young
 * generation filled every ~90 ms, and each scavenge holds every request in flight; these four
 * objects were ~0.4 KB of the ~1.2 KB a route request left behind. An exchange goes back to
 * the router's pool only when its request was answered inside the body callback and not
 * aborted: uWS calls neither callback of a response once it has ended (onData has had its
 * last chunk, and end() drops the onAborted handler), and no handler of a hot endpoint keeps
 * its context. Any other request (answered later, aborted, a body in several chunks that
 * timed out) leaves its exchange to the garbage collector.
 */
import type { HttpResponse } from '@trufflesuite/uws-js-unofficial';
import { Buffer } from 'node:buffer';
import { performance } from 'node:perf_hooks';
import { errors } from '../errors.js';
import type { KeyGrant } from './api-keys.js';
import { BodyReader, type BodySink } from './body.js';
import { decodeBody, type Mounted } from './decode-body.js';
import type { Ctx, Reply } from './endpoint.js';
import { DEV_GRANT, NO_PARAMS, type Exchange, type RequestObserver } from './exchange.js';
import { jsonHead } from './reply.js';

/** What a HotExchange needs of its router (the generic path's own steps). */
export interface ExchangeHost {
  readonly maxBodyBytes: number;
  readonly requestTimeoutMs: number;
  fail(x: Exchange, err: unknown): void;
  /** Answers with a handler's reply the hot path does not write itself. */
  settle(x: Exchange, out: Reply | Promise<Reply>): void;
  /** Takes an answered request off the in-flight count. */
  finish(x: Exchange): void;
  /** uWS reported the client gone before the answer. */
  abort(x: Exchange): void;
  /** The exchange's request is over (answered, not aborted): it may serve another. */
  recycle(x: HotExchange): void;
}

/** The status line and Content-Type of a reply the hot path writes itself, or undefined (see answer()). */
function usualHead(r: Reply): Buffer | undefined {
  if (r.stream !== undefined || r.headers !== undefined || (r.contentType !== undefined && r.contentType !== 'application/json')) return undefined;
  const body = r.body;
  if (typeof body !== 'string' && !Buffer.isBuffer(body)) return undefined;
  return jsonHead(r.status);
}

const EMPTY_QUERY = '';
/** A placeholder until begin(): never answered through (begin sets every field before uWS can call back). */
const NO_RESPONSE = null as unknown as HttpResponse;
const NO_TARGET = null as unknown as Mounted;
const NO_SERIES: RequestObserver = { observe() {} };

export class HotExchange implements Exchange, Ctx, BodySink {
  // Exchange (reply state and metrics labels); every field is set in begin(), none added later.
  aborted = false;
  done = false;
  corsOrigin: string | null = null; // the router sends only Origin-less requests here
  counted = false;
  readonly method = 'POST';
  readonly params = NO_PARAMS;
  res: HttpResponse = NO_RESPONSE;
  template = '';
  t0 = 0;
  grant: KeyGrant = DEV_GRANT;
  series: RequestObserver = NO_SERIES;
  private target: Mounted = NO_TARGET;
  readonly reader: BodyReader;
  private deadline: ReturnType<typeof setTimeout> | null = null;
  private parsedQuery: URLSearchParams | null = null;
  /** What uWS is given for each request this object serves: made once, not per request. */
  readonly onData = (chunk: ArrayBuffer, isLast: boolean): void => this.reader.data(chunk, isLast);
  readonly onAborted = (): void => this.host.abort(this);

  constructor(private readonly host: ExchangeHost) {
    this.reader = new BodyReader(host.maxBodyBytes, this);
  }

  /** Starts serving one request (a new object, or one the router took back from its pool). */
  begin(target: Mounted, res: HttpResponse, template: string, t0: number, grant: KeyGrant, series: RequestObserver): void {
    this.aborted = false;
    this.done = false;
    this.counted = false;
    this.res = res;
    this.template = template;
    this.t0 = t0;
    this.grant = grant;
    this.series = series;
    this.target = target;
    this.deadline = null;
    this.parsedQuery = null;
    this.reader.reset();
  }

  /** Ctx: the router sends only requests without a query string here. */
  get query(): URLSearchParams {
    return (this.parsedQuery ??= new URLSearchParams(EMPTY_QUERY));
  }

  /** The body spans several chunks: it must be complete by the request timeout (408; 413 if already over the limit). */
  bodyPartial(): void {
    this.deadline = setTimeout(() => {
      const max = this.host.maxBodyBytes;
      this.host.fail(this, this.reader.oversized ? errors.tooLarge(max) : errors.requestTimeout());
    }, this.host.requestTimeoutMs);
  }

  bodyDone(body: Buffer | null): void {
    if (this.deadline !== null) {
      clearTimeout(this.deadline);
      this.deadline = null;
    }
    if (this.done || this.aborted) return;
    let value: unknown;
    try {
      value = decodeBody(this.target, body, this.host.maxBodyBytes);
    } catch (e) {
      this.host.fail(this, e);
      return this.release();
    }
    this.answer(value);
    this.release();
  }

  /**
   * Runs the endpoint's handler and writes its usual answer itself: a JSON body (bytes or a
   * string) under a status of the table, no header of its own. The router's reply code
   * (Router.settle, reply.ts's send and writeHead) answers every endpoint: scrapes, health
   * checks, errors. Optimised for the route path alone, it met the first scrape's exchange (a
   * plain object, not a HotExchange) and content type under load, was deoptimised ("wrong map",
   * "insufficient type feedback") and compiled again, ~50 ms of compile jobs on the service's
   * core while routes ran on unoptimised code. This code only ever sees the hot endpoints'
   * replies. Any other reply (a promise, a stream, headers, another content type, an object
   * body) and a thrown error go to the router, as on the generic path: the same bytes either way.
   */
  private answer(value: unknown): void {
    let out: Reply | Promise<Reply>;
    try {
      out = this.target.ep.handler(this, value);
    } catch (e) {
      return this.host.fail(this, e);
    }
    if (out instanceof Promise) return this.host.settle(this, out);
    const head = usualHead(out);
    if (head === undefined) return this.host.settle(this, out);
    this.done = true;
    // Inside uWS's body callback (deliver() marks it): the socket is corked, no cork() needed.
    this.res.writeStatus(head);
    this.res.end(out.body as Buffer | string);
    this.host.finish(this);
    this.series.observe(out.status, (performance.now() - this.t0) / 1000);
  }

  /**
   * Back to the router's pool if the request is over: answered (counted) here, not aborted,
   * and its last chunk read (a body refused past the discard cap is answered before its end).
   */
  private release(): void {
    if (this.counted && !this.aborted && this.reader.lastSeen) this.host.recycle(this);
  }
}
