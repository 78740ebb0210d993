/**
 * What the router tracks per request (router.ts, and its fast path in hot-path.ts): the reply
 * state and metrics labels (Exchange), and the context a handler gets (RequestCtx).
 */
import type { HttpResponse } from '@trufflesuite/uws-js-unofficial';
import type { KeyGrant } from './api-keys.js';
import type { Ctx, Method } from './endpoint.js';
import type { ResponseState } from './reply.js';

/** The grant of every request in development mode (no SERVICE_API_KEYS). */
export const DEV_GRANT: KeyGrant = Object.freeze({ tenantId: 'default', admin: true });

/** Where a request is counted once answered (metrics: its method and path template's series). */
export interface RequestObserver {
  observe(status: number, seconds: number): void;
}

/** One request as the router tracks it: its reply state (for reply.ts) and what it is observed under. */
export interface Exchange extends ResponseState {
  readonly res: HttpResponse;
  readonly method: string;
  /** Path template, the metrics label ('/*' for an unknown path). */
  readonly template: string;
  /** When the request arrived (performance.now()). */
  readonly t0: number;
  /** Taken off the in-flight count (once: answered or aborted). */
  counted: boolean;
  /** Its metrics series when known in advance (the hot path's), else null: looked up when answered. */
  readonly series: RequestObserver | null;
}

export const NO_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;

/** A request's context; the query string is parsed only if a handler asks for it. */
export class RequestCtx implements Ctx {
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
