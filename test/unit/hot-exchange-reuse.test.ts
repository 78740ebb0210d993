/**
 * The hot path's exchanges are reused (src/http/hot-path.ts): one object, its body reader and
 * its two uWS callbacks serve request after request. In-process, with the real Router on a
 * real uWS app and raw sockets: every answer must stay its own request's (a field left over
 * from the request before would show in the echo), the number of exchanges made must stay at
 * the number of requests in flight, and an exchange whose request was aborted, timed out or is
 * answered later must not be handed to another request.
 */
import { connect, type Socket } from 'node:net';
import { Type } from '@sinclair/typebox';
import uws from '@trufflesuite/uws-js-unofficial';
import { afterEach, describe, expect, it } from 'vitest';
import { parseApiKeys } from '../../src/http/api-keys.js';
import { CorsPolicy } from '../../src/http/cors.js';
import { endpoint, type Endpoint } from '../../src/http/endpoint.js';
import { RateLimiter } from '../../src/http/rate-limit.js';
import { Router } from '../../src/http/router.js';
import { compile } from '../../src/schemas/common.js';

const Echo = Type.Object({ n: Type.Number(), s: Type.String() }, { additionalProperties: false });
const echoBody = compile(Echo);

function endpoints(): Endpoint[] {
  const reply = (ctx: { grant: { tenantId: string }; query: URLSearchParams }, b: { n: number; s: string }) => ({
    status: 200,
    body: { n: b.n, s: b.s, tenant: ctx.grant.tenantId, query: ctx.query.toString() },
  });
  return [
    endpoint({ method: 'POST', path: '/echo', auth: true, body: echoBody, flatBody: true, handler: (ctx, b) => reply(ctx, b), doc: { hidden: true } }),
    // Answered later: its exchange must stay its own until then.
    endpoint({
      method: 'POST',
      path: '/later',
      auth: true,
      body: echoBody,
      flatBody: true,
      handler: (ctx, b) => new Promise((resolve) => setTimeout(() => resolve(reply(ctx, b)), 150)),
      doc: { hidden: true },
    }),
  ];
}

interface Served {
  router: Router;
  port: number;
  close(): void;
}

const open: Served[] = [];
afterEach(() => {
  for (const s of open.splice(0)) s.close();
});

function serve(requestTimeoutMs = 2_000): Promise<Served> {
  const router = new Router({
    apiKeys: parseApiKeys('key-a:tenant_a,key-b:tenant_b'),
    cors: new CorsPolicy([]),
    maxBodyBytes: 1024,
    rateLimiter: new RateLimiter(0),
    requestTimeoutMs,
    requestSeries: () => ({ observe() {} }),
    onInternalError: (e) => {
      throw e;
    },
  });
  const app = uws.App();
  router.mount(app, endpoints());
  return new Promise((resolve, reject) => {
    app.listen('127.0.0.1', 0, (ls) => {
      if (!ls) return reject(new Error('listen failed'));
      const s = { router, port: uws.us_socket_local_port(ls), close: () => uws.us_listen_socket_close(ls) };
      open.push(s);
      resolve(s);
    });
  });
}

const post = (path: string, body: string, key: string) =>
  `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-API-Key: ${key}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

/** A keep-alive connection: send() writes raw bytes and resolves with the next complete answer (status and body). */
async function client(port: number): Promise<{ send(raw: string | string[]): Promise<{ status: number; body: string }>; sock: Socket }> {
  const sock = connect(port, '127.0.0.1');
  await new Promise((r) => sock.once('connect', r));
  let buf = '';
  let waiting: ((a: { status: number; body: string }) => void) | null = null;
  const tryParse = () => {
    const end = buf.indexOf('\r\n\r\n');
    if (end < 0 || waiting === null) return;
    const head = buf.slice(0, end);
    const len = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
    if (buf.length < end + 4 + len) return;
    const answer = { status: Number(head.slice(9, 12)), body: buf.slice(end + 4, end + 4 + len) };
    buf = buf.slice(end + 4 + len);
    const w = waiting;
    waiting = null;
    w(answer);
  };
  sock.on('data', (d) => {
    buf += d.toString('latin1');
    tryParse();
  });
  return {
    sock,
    send(raw) {
      const parts = Array.isArray(raw) ? raw : [raw];
      return new Promise((resolve) => {
        waiting = resolve;
        parts.forEach((p, i) => setTimeout(() => sock.write(p), i * 40));
        tryParse();
      });
    },
  };
}

const echo = (n: number, s = `s${n}`) => JSON.stringify({ n, s });

describe('hot-path exchanges are reused', () => {
  it('one connection, many requests: one exchange, every answer its own (tenant, values, refusals)', async () => {
    const s = await serve();
    const c = await client(s.port);
    for (let i = 0; i < 200; i++) {
      const key = i % 2 === 0 ? 'key-a' : 'key-b';
      if (i % 10 === 7) {
        // Refusals in between: a field the schema does not know (422), broken JSON (400).
        expect((await c.send(post('/echo', '{"n":1,"s":"x","extra":true}', key))).status).toBe(422);
        expect((await c.send(post('/echo', '{"n":1,', key))).status).toBe(400);
      }
      const a = await c.send(post('/echo', echo(i), key));
      expect(a.status).toBe(200);
      expect(JSON.parse(a.body)).toEqual({ n: i, s: `s${i}`, tenant: i % 2 === 0 ? 'tenant_a' : 'tenant_b', query: '' });
    }
    expect(s.router.hotStats.created).toBe(1);
    c.sock.destroy();
  });

  it('several connections at once: no more exchanges than requests in flight', async () => {
    const s = await serve();
    const clients = await Promise.all(Array.from({ length: 8 }, () => client(s.port)));
    await Promise.all(
      clients.map(async (c, k) => {
        for (let i = 0; i < 50; i++) {
          const a = await c.send(post('/echo', echo(k * 1000 + i), 'key-a'));
          expect(JSON.parse(a.body).n).toBe(k * 1000 + i);
        }
      }),
    );
    expect(s.router.hotStats.created).toBeGreaterThan(0);
    expect(s.router.hotStats.created).toBeLessThanOrEqual(8);
    for (const c of clients) c.sock.destroy();
  });

  it('an aborted request keeps its exchange out of the pool', async () => {
    const s = await serve();
    const gone = await client(s.port);
    const whole = post('/echo', echo(1), 'key-a');
    gone.sock.write(whole.slice(0, whole.length - 5), 'latin1'); // the body's end never comes
    await new Promise((r) => setTimeout(r, 50));
    gone.sock.destroy();
    await new Promise((r) => setTimeout(r, 50));
    expect(s.router.hotStats.created).toBe(1);
    const c = await client(s.port);
    expect(JSON.parse((await c.send(post('/echo', echo(2), 'key-b'))).body)).toEqual({ n: 2, s: 's2', tenant: 'tenant_b', query: '' });
    // A new one was made (the aborted one was not handed over), and it is reused from now on.
    expect(s.router.hotStats.created).toBe(2);
    expect(JSON.parse((await c.send(post('/echo', echo(3), 'key-a'))).body).n).toBe(3);
    expect(s.router.hotStats.created).toBe(2);
    c.sock.destroy();
  });

  it('a body in two chunks is answered and reused; one that never completes gets its 408 and is not reused', async () => {
    const s = await serve(300);
    const c = await client(s.port);
    const whole = post('/echo', echo(10), 'key-a');
    const a = await c.send([whole.slice(0, whole.length - 6), whole.slice(whole.length - 6)]);
    expect(JSON.parse(a.body).n).toBe(10);
    expect(s.router.hotStats.created).toBe(1);
    const slow = await client(s.port);
    const half = post('/echo', echo(11), 'key-a');
    const timedOut = await slow.send(half.slice(0, half.length - 4));
    expect(timedOut.status).toBe(408);
    expect(JSON.parse((await c.send(post('/echo', echo(12), 'key-b'))).body)).toMatchObject({ n: 12, tenant: 'tenant_b' });
    // The pool held one exchange (taken by the request that timed out, never returned): a second was made.
    expect(s.router.hotStats.created).toBe(2);
    c.sock.destroy();
    slow.sock.destroy();
  });

  it('a request answered later keeps its exchange while others are served', async () => {
    const s = await serve();
    const a = await client(s.port);
    const b = await client(s.port);
    const later = a.send(post('/later', echo(100, 'later'), 'key-a'));
    await new Promise((r) => setTimeout(r, 20));
    for (let i = 0; i < 20; i++) expect(JSON.parse((await b.send(post('/echo', echo(i), 'key-b'))).body)).toMatchObject({ n: i, tenant: 'tenant_b' });
    expect(JSON.parse((await later).body)).toEqual({ n: 100, s: 'later', tenant: 'tenant_a', query: '' });
    a.sock.destroy();
    b.sock.destroy();
  });
});
