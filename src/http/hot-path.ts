/**
 * The router's fast path for the hot endpoints (those with `flatBody`: POST /v1/route and
 * POST /v1/outcome). The router hands a request here only in its usual form (see
 * Router.serveHot: not draining, no rate limits, no CORS origin, a known API key, no query
 * string, a Content-Length within the limit); everything else takes the generic path from the
 * start. Here one object, HotExchange, is at once the request's reply state (Exchange), the
 * handler's context (Ctx) and the sink of its body (BodySink): the generic path's separate
 * exchange, context, per-stage closures and result objects cost about a kilobyte of garbage
 * per request, which at 100,000 rules pushes the routing data out of the cache. The body then
 * takes the same decoding, validation, handler and reply code as on the generic path, so
 * every answer is the same.
 */
import type { HttpResponse } from '@trufflesuite/uws-js-unofficial';
import { errors } from '../errors.js';
import type { KeyGrant } from './api-keys.js';
import type { BodyReader, BodySink } from './body.js';
import { decodeBody, type Mounted } from './decode-body.js';
import type { Ctx, Endpoint } from './endpoint.js';
import { NO_PARAMS, type Exchange, type RequestObserver } from './exchange.js';

/** What a HotExchange needs of its router (the generic path's own steps). */
export interface ExchangeHost {
  readonly maxBodyBytes: number;
  readonly requestTimeoutMs: number;
  fail(x: Exchange, err: unknown): void;
  run(x: Exchange, ep: Endpoint, ctx: Ctx, body: unknown): void;
}

const EMPTY_QUERY = '';

export class HotExchange implements Exchange, Ctx, BodySink {
  // Exchange (reply state and metrics labels)
  aborted = false;
  done = false;
  corsOrigin: string | null = null; // the router sends only Origin-less requests here
  counted = false;
  readonly method = 'POST';
  readonly params = NO_PARAMS;
  /** Set by the router right after construction (the reader takes this object as its sink). */
  reader: BodyReader | null = null;
  private deadline: ReturnType<typeof setTimeout> | null = null;
  private parsedQuery: URLSearchParams | null = null;

  constructor(
    private readonly host: ExchangeHost,
    private readonly target: Mounted,
    readonly res: HttpResponse,
    readonly template: string,
    readonly t0: number,
    readonly grant: KeyGrant,
    readonly series: RequestObserver,
  ) {}

  /** Ctx: the router sends only requests without a query string here. */
  get query(): URLSearchParams {
    return (this.parsedQuery ??= new URLSearchParams(EMPTY_QUERY));
  }

  /** The body spans several chunks: it must be complete by the request timeout (408; 413 if already over the limit). */
  bodyPartial(): void {
    this.deadline = setTimeout(() => {
      const max = this.host.maxBodyBytes;
      this.host.fail(this, this.reader?.oversized ? errors.tooLarge(max) : errors.requestTimeout());
    }, this.host.requestTimeoutMs);
  }

  bodyDone(body: Buffer | null): void {
    if (this.deadline !== null) clearTimeout(this.deadline);
    if (this.done || this.aborted) return;
    let value: unknown;
    try {
      value = decodeBody(this.target, body, this.host.maxBodyBytes);
    } catch (e) {
      return this.host.fail(this, e);
    }
    this.host.run(this, this.target.ep, this, value);
  }
}
