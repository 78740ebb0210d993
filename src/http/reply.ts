/**
 * Writing responses on uWS. Every write is corked (one syscall) and skipped if the client
 * has gone; status lines are precomputed. Inside uWS's own callbacks (the request handler,
 * onData) the socket is corked already, so the reply is written directly there — no cork
 * closure per request on the route path; answers given later (async handlers, timers) cork.
 */
import type { HttpResponse } from '@trufflesuite/uws-js-unofficial';

const STATUS_TEXT: Record<number, string> = {
  200: '200 OK',
  201: '201 Created',
  202: '202 Accepted',
  204: '204 No Content',
  400: '400 Bad Request',
  401: '401 Unauthorized',
  403: '403 Forbidden',
  404: '404 Not Found',
  405: '405 Method Not Allowed',
  408: '408 Request Timeout',
  409: '409 Conflict',
  413: '413 Payload Too Large',
  422: '422 Unprocessable Entity',
  429: '429 Too Many Requests',
  500: '500 Internal Server Error',
  503: '503 Service Unavailable',
  507: '507 Insufficient Storage',
};

export function statusLine(status: number): string {
  return STATUS_TEXT[status] ?? `${status} Status`;
}

/**
 * Status line and Content-Type of a JSON reply as one precomputed block: uWS writes the status
 * it is given followed by CRLF, and a header as `name: value` CRLF, so passing both to
 * writeStatus puts the same bytes on the wire with one call into uWS instead of two. Kept as
 * bytes: uWS measures and encodes a string argument on every call, bytes it copies as they are.
 */
const JSON_HEAD: Record<number, Buffer> = Object.fromEntries(
  Object.entries(STATUS_TEXT).map(([code, line]) => [code, Buffer.from(`${line}\r\nContent-Type: application/json`, 'latin1')]),
);

/** Per-request response state the router tracks. */
export interface ResponseState {
  aborted: boolean;
  done: boolean;
  corsOrigin: string | null; // the allowed Origin to echo, if any
}

/** How many uWS callbacks are on the stack (see enterUwsCallback). */
let uwsCallbacks = 0;

/** Marks the start of a uWS callback; pair with leaveUwsCallback in a finally. */
export function enterUwsCallback(): void {
  uwsCallbacks++;
}

export function leaveUwsCallback(): void {
  uwsCallbacks--;
}

export function send(
  res: HttpResponse,
  state: ResponseState,
  status: number,
  body: string | Buffer,
  contentType = 'application/json',
  headers?: Record<string, string>,
  closeConnection = false,
): void {
  if (state.aborted || state.done) return;
  state.done = true;
  if (uwsCallbacks > 0) write(res, state, status, body, contentType, headers, closeConnection);
  else res.cork(() => write(res, state, status, body, contentType, headers, closeConnection));
}

function write(
  res: HttpResponse,
  state: ResponseState,
  status: number,
  body: string | Buffer,
  contentType: string,
  headers: Record<string, string> | undefined,
  closeConnection: boolean,
): void {
  writeHead(res, state, status, contentType, headers);
  res.end(body, closeConnection);
}

/** The status line and Content-Type of a JSON answer, or undefined for a status outside STATUS_TEXT. */
export function jsonHead(status: number): Buffer | undefined {
  return JSON_HEAD[status];
}

/** Status line and headers (with the CORS ones when the origin is allowed); the caller corks. */
export function writeHead(res: HttpResponse, state: ResponseState, status: number, contentType: string, headers: Record<string, string> | undefined): void {
  const head = contentType === 'application/json' ? jsonHead(status) : undefined;
  if (head !== undefined) res.writeStatus(head);
  else {
    res.writeStatus(statusLine(status));
    res.writeHeader('Content-Type', contentType);
  }
  if (state.corsOrigin !== null) {
    res.writeHeader('Access-Control-Allow-Origin', state.corsOrigin);
    res.writeHeader('Vary', 'Origin');
  }
  if (headers) for (const k in headers) res.writeHeader(k, headers[k]);
}
