/**
 * The hot path writes its usual answers itself (HotExchange.answer in src/http/hot-path.ts): a
 * JSON body of bytes or a string under a status of the table, no header of its own. Every
 * other reply goes to the router's generic code. In-process, with the real Router on a real uWS
 * app and raw sockets, the same endpoint asked on the hot path and on the generic one (a query
 * string sends a request there) must put the same bytes on the wire; the usual replies must
 * not reach the router's reply code (so scrapes and other endpoints cannot deoptimise it under
 * route traffic); and every request must be counted once, under its status, and leave the
 * in-flight count (drain() resolves).
 */
import { connect } from 'node:net';
import { Type } from '@sinclair/typebox';
import uws from '@trufflesuite/uws-js-unofficial';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseApiKeys } from '../../src/http/api-keys.js';
import { CorsPolicy } from '../../src/http/cors.js';
import { endpoint, type Endpoint, type Reply } from '../../src/http/endpoint.js';
import { RateLimiter } from '../../src/http/rate-limit.js';
import { Router } from '../../src/http/router.js';
import { errors } from '../../src/errors.js';
import { compile } from '../../src/schemas/common.js';

const Body = Type.Object({ n: Type.Number() }, { additionalProperties: false });
const body = compile(Body);

/** Each endpoint answers its kind of reply with `status`; `usual`: the hot path writes it itself. */
const KINDS: { path: string; usual: boolean; status: number; reply: (n: number) => Reply | Promise<Reply> }[] = [
  { path: '/bytes', usual: true, status: 200, reply: (n) => ({ status: 200, body: Buffer.from(`{"n":${n}}`) }) },
  { path: '/text', usual: true, status: 202, reply: (n) => ({ status: 202, body: `{"accepted":${n}}` }) },
  { path: '/object', usual: false, status: 200, reply: (n) => ({ status: 200, body: { n } }) },
  { path: '/headers', usual: false, status: 200, reply: (n) => ({ status: 200, body: `{"n":${n}}`, headers: { 'X-Extra': String(n) } }) },
  { path: '/plain', usual: false, status: 200, reply: (n) => ({ status: 200, body: `n=${n}`, contentType: 'text/plain' }) },
  { path: '/odd-status', usual: false, status: 299, reply: (n) => ({ status: 299, body: `{"n":${n}}` }) },
  { path: '/later', usual: false, status: 200, reply: (n) => new Promise((r) => setTimeout(() => r({ status: 200, body: Buffer.from(`{"n":${n}}`) }), 20)) },
  {
    path: '/refused',
    usual: false,
    status: 422,
    reply: () => {
      throw errors.field('n', 'is refused here');
    },
  },
];

function endpoints(): Endpoint[] {
  return KINDS.map((k) =>
    endpoint({ method: 'POST', path: k.path, auth: true, body, flatBody: true, handler: (_ctx, b: { n: number }) => k.reply(b.n), doc: { hidden: true } }),
  );
}

const open: (() => void)[] = [];
afterEach(() => {
  for (const close of open.splice(0)) close();
});

async function serve(): Promise<{ router: Router; port: number; observed: [string, number][] }> {
  const observed: [string, number][] = [];
  const router = new Router({
    apiKeys: parseApiKeys('key-a:tenant_a'),
    cors: new CorsPolicy([]),
    maxBodyBytes: 1024,
    rateLimiter: new RateLimiter(0),
    requestTimeoutMs: 2_000,
    requestSeries: (_method, template) => ({ observe: (status) => observed.push([template, status]) }),
    onInternalError: (e) => {
      throw e;
    },
  });
  const app = uws.App();
  router.mount(app, endpoints());
  const port = await new Promise<number>((resolve, reject) => {
    app.listen('127.0.0.1', 0, (ls) => {
      if (!ls) return reject(new Error('listen failed'));
      open.push(() => uws.us_listen_socket_close(ls));
      resolve(uws.us_socket_local_port(ls));
    });
  });
  return { router, port, observed };
}

/** One request on its own connection; the whole answer as sent, with uWS's Date header taken out. */
function ask(port: number, path: string, n: number): Promise<string> {
  const json = `{"n":${n}}`;
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1', () =>
      sock.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-API-Key: key-a\r\nContent-Length: ${json.length}\r\n\r\n${json}`),
    );
    let buf = '';
    sock.on('data', (d) => {
      buf += d.toString('latin1');
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const len = Number(/content-length: (\d+)/i.exec(buf.slice(0, end))?.[1] ?? NaN);
      if (buf.length < end + 4 + len) return;
      sock.destroy();
      resolve(buf.slice(0, end + 4 + len).replace(/\r\nDate: [^\r]*/i, ''));
    });
    sock.on('error', reject);
  });
}

describe('the hot path writes its usual answers itself', () => {
  it('every kind of reply: the same bytes on the hot path as on the generic one', async () => {
    const { port } = await serve();
    for (const k of KINDS) {
      const hot = await ask(port, k.path, 7);
      const generic = await ask(port, `${k.path}?generic=1`, 7);
      expect(hot, k.path).toBe(generic);
      expect(hot, k.path).toMatch(/^HTTP\/1\.1 \d{3} /);
    }
    expect(await ask(port, '/bytes', 3)).toMatch(/^HTTP\/1\.1 200 OK\r\nContent-Type: application\/json\r\n[\s\S]*\r\n\r\n\{"n":3\}$/);
    expect(await ask(port, '/text', 4)).toMatch(/^HTTP\/1\.1 202 Accepted\r\nContent-Type: application\/json\r\n[\s\S]*\r\n\r\n\{"accepted":4\}$/);
    expect(await ask(port, '/headers', 5)).toContain('\r\nX-Extra: 5\r\n');
    expect(await ask(port, '/refused', 6)).toMatch(/^HTTP\/1\.1 422 /);
  });

  it('only the usual replies skip the router: the rest reach Router.settle or Router.fail', async () => {
    const { router, port } = await serve();
    const settle = vi.spyOn(router, 'settle');
    const fail = vi.spyOn(router, 'fail');
    for (const k of KINDS) {
      settle.mockClear();
      fail.mockClear();
      await ask(port, k.path, 1);
      const reachedRouter = settle.mock.calls.length + fail.mock.calls.length;
      expect(reachedRouter, k.path).toBe(k.usual ? 0 : 1);
    }
  });

  it('every request is counted once under its status and leaves the in-flight count', async () => {
    const { router, port, observed } = await serve();
    for (let i = 0; i < 3; i++) for (const k of KINDS) await ask(port, k.path, i);
    const expected = KINDS.map((k) => [k.path, k.status] as [string, number]);
    expect(observed).toEqual([...expected, ...expected, ...expected]);
    // drain() resolves once nothing is in flight: a request left counted in would hold it.
    await expect(Promise.race([router.drain().then(() => 'drained'), new Promise((r) => setTimeout(() => r('still in flight'), 500))])).resolves.toBe('drained');
  });
});
