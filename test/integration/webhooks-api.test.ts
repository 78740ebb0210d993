/**
 * The webhook API against the real compiled server started as a child process
 * (`node dist/src/main.js`): registration, listing, pause/resume, deletion, validation of every
 * field, tenant isolation, refusal of private destinations, the per-tenant limit, and no
 * secret in the logs. Build first: `npx tsc -p tsconfig.json`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const EVENT_TYPES = ['failover.triggered', 'failover.recovered', 'processor.degraded', 'processor.healthy'];
const SECRET = 'never-log-me-7f3a9c21';

interface Server {
  base: string;
  output(): string;
  stop(): Promise<void>;
}

/** Minimal local helper: starts dist/src/main.js on a free port (PORT=0) and reads the port from its log. */
async function startServer(env: Record<string, string>): Promise<Server> {
  const dir = mkdtempSync(join(tmpdir(), 'wh-api-'));
  const child: ChildProcess = spawn(process.execPath, [join(ROOT, 'dist/src/main.js')], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', SERVICE_DATA_DIR: join(dir, 'data'), SERVICE_LOG_LEVEL: 'debug', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (c) => (out += c));
  child.stderr!.on('data', (c) => (out += c));
  const port = await new Promise<number>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`server did not start:\n${out}`)), 20_000);
    const check = () => {
      const m = /"msg":"service started".*?"port":(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        ok(Number(m[1]));
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => fail(new Error(`server exited (${code}):\n${out}`)));
  });
  return {
    base: `http://127.0.0.1:${port}`,
    output: () => out,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(t);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

let srv: Server;
let open: Server;

async function api(s: Server, method: string, path: string, body?: unknown, key = 'a'): Promise<{ status: number; body: any }> {
  const res = await fetch(`${s.base}${path}`, {
    method,
    headers: { 'x-api-key': key, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

const fieldsOf = (r: { body: any }) => (r.body?.error?.fields ?? []).map((f: { field: string }) => f.field);

beforeAll(async () => {
  [srv, open] = await Promise.all([
    startServer({ SERVICE_API_KEYS: 'a:t1,b:t2,c:t3' }),
    startServer({ SERVICE_API_KEYS: 'a:t1', SERVICE_WEBHOOK_ALLOW_PRIVATE: '1', SERVICE_WEBHOOK_BACKOFF_MS: '300,600,1200', SERVICE_WEBHOOK_TIMEOUT_MS: '1000' }),
  ]);
});

afterAll(async () => {
  await Promise.all([srv?.stop(), open?.stop()]);
});

describe('webhook registration API', () => {
  let id: string;

  it('registers a webhook: 201, all event types by default, never the secret', async () => {
    const r = await api(srv, 'POST', '/v1/webhooks', { url: 'https://hooks.example.com/payments', secret: SECRET });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ url: 'https://hooks.example.com/payments', event_types: EVENT_TYPES, active: true, has_secret: true });
    expect(r.body.id).toMatch(/^wh_[0-9a-f]{24}$/);
    expect(r.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    expect(r.body).not.toHaveProperty('secret');
    expect(JSON.stringify(r.body)).not.toContain(SECRET);
    id = r.body.id;

    const sub = await api(srv, 'POST', '/v1/webhooks', { url: 'http://hooks.example.com/x', event_types: ['processor.healthy'] });
    expect(sub.status).toBe(201);
    expect(sub.body).toMatchObject({ event_types: ['processor.healthy'], has_secret: false });
  });

  it('lists, reads, pauses, resumes, changes and deletes', async () => {
    const list = await api(srv, 'GET', '/v1/webhooks');
    expect(list.status).toBe(200);
    expect(list.body.total).toBe(2);
    expect(list.body.webhooks[0].id).toBe(id);
    expect(JSON.stringify(list.body)).not.toContain(SECRET);

    const one = await api(srv, 'GET', `/v1/webhooks/${id}`);
    expect(one.status).toBe(200);
    expect(one.body).toEqual(list.body.webhooks[0]);

    expect((await api(srv, 'PATCH', `/v1/webhooks/${id}`, { active: false })).body.active).toBe(false);
    expect((await api(srv, 'GET', `/v1/webhooks/${id}`)).body.active).toBe(false);
    const resumed = await api(srv, 'PATCH', `/v1/webhooks/${id}`, { active: true, event_types: ['failover.triggered'], secret: null });
    expect(resumed.status).toBe(200);
    expect(resumed.body).toMatchObject({ active: true, event_types: ['failover.triggered'], has_secret: false });
    const moved = await api(srv, 'PATCH', `/v1/webhooks/${id}`, { url: 'https://other.example.com/h', secret: 'another-secret-1' });
    expect(moved.body).toMatchObject({ url: 'https://other.example.com/h', has_secret: true });

    expect((await api(srv, 'GET', `/v1/webhooks/${id}/deliveries`)).body).toEqual({ deliveries: [], total: 0 });

    const del = await api(srv, 'DELETE', `/v1/webhooks/${id}`);
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ deleted: id });
    for (const [method, path] of [
      ['GET', `/v1/webhooks/${id}`],
      ['DELETE', `/v1/webhooks/${id}`],
      ['PATCH', `/v1/webhooks/${id}`],
      ['GET', `/v1/webhooks/${id}/deliveries`],
      ['GET', '/v1/webhooks/not-an-id'],
    ]) {
      const r = await api(srv, method, path, method === 'PATCH' ? { active: true } : undefined);
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(r.body.error.code).toBe('WEBHOOK_NOT_FOUND');
    }
    expect((await api(srv, 'GET', '/v1/webhooks')).body.total).toBe(1);
  });

  it('isolates tenants: another tenant gets 404 for the id and an empty list', async () => {
    const mine = (await api(srv, 'POST', '/v1/webhooks', { url: 'https://t1.example.com/h' }, 'a')).body.id;
    expect((await api(srv, 'GET', '/v1/webhooks', undefined, 'b')).body).toEqual({ webhooks: [], total: 0 });
    for (const [method, path, body] of [
      ['GET', `/v1/webhooks/${mine}`, undefined],
      ['PATCH', `/v1/webhooks/${mine}`, { active: false }],
      ['DELETE', `/v1/webhooks/${mine}`, undefined],
      ['GET', `/v1/webhooks/${mine}/deliveries`, undefined],
    ] as const) {
      const r = await api(srv, method, path, body, 'b');
      expect(r.status, `${method} ${path}`).toBe(404);
      expect(r.body.error.code).toBe('WEBHOOK_NOT_FOUND');
    }
    const still = await api(srv, 'GET', `/v1/webhooks/${mine}`, undefined, 'a');
    expect(still.status).toBe(200);
    expect(still.body.active).toBe(true);
    expect((await api(srv, 'GET', '/v1/webhooks', undefined, 'nope')).status).toBe(401);
  });

  it.each([
    'http://127.0.0.1/hook',
    'http://127.0.0.1:8080/hook',
    'http://10.0.0.1/hook',
    'http://172.16.5.4/hook',
    'http://192.168.1.20/hook',
    'http://100.64.0.1/hook',
    'http://[::1]/hook',
    'http://[fd00::1]/hook',
    'http://[fe80::1]/hook',
    'http://[::ffff:127.0.0.1]/hook',
    'http://169.254.169.254/latest/meta-data/',
    'http://0.0.0.0/hook',
    'http://localhost/hook',
    'http://localhost:3000/hook',
    'http://metadata.google.internal/computeMetadata/v1/',
  ])('refuses the private destination %s with 422 on url', async (url) => {
    const r = await api(srv, 'POST', '/v1/webhooks', { url });
    expect(r.status).toBe(422);
    expect(fieldsOf(r)).toEqual(['url']);
    expect(r.body.error.message).toMatch(/refused/);
  });

  it('refuses a private destination on PATCH too', async () => {
    const id = (await api(srv, 'POST', '/v1/webhooks', { url: 'https://t1.example.com/p' })).body.id;
    const r = await api(srv, 'PATCH', `/v1/webhooks/${id}`, { url: 'http://10.1.2.3/x' });
    expect(r.status).toBe(422);
    expect(fieldsOf(r)).toEqual(['url']);
  });

  it('accepts private destinations when SERVICE_WEBHOOK_ALLOW_PRIVATE is set', async () => {
    for (const url of ['http://127.0.0.1:9/hook', 'http://localhost:9/hook', 'http://[::1]:9/hook']) {
      const r = await api(open, 'POST', '/v1/webhooks', { url });
      expect(r.status, url).toBe(201);
    }
  });

  it.each([
    [{}, 'url'],
    [{ url: 42 }, 'url'],
    [{ url: '' }, 'url'],
    [{ url: '/relative' }, 'url'],
    [{ url: 'hooks.example.com/x' }, 'url'],
    [{ url: 'ftp://hooks.example.com/x' }, 'url'],
    [{ url: 'https://user:pass@hooks.example.com/x' }, 'url'],
    [{ url: 'https://hooks.example.com/a b' }, 'url'],
    [{ url: `https://hooks.example.com/${'x'.repeat(2030)}` }, 'url'],
    [{ url: 'https://hooks.example.com/', event_types: [] }, 'event_types'],
    [{ url: 'https://hooks.example.com/', event_types: 'failover.triggered' }, 'event_types'],
    [{ url: 'https://hooks.example.com/', event_types: ['failover.triggered', 'failover.triggered'] }, 'event_types'],
    [{ url: 'https://hooks.example.com/', event_types: ['payment.captured'] }, 'event_types[0]'],
    [{ url: 'https://hooks.example.com/', event_types: ['processor.healthy', 7] }, 'event_types[1]'],
    [{ url: 'https://hooks.example.com/', secret: 'short' }, 'secret'],
    [{ url: 'https://hooks.example.com/', secret: 'x'.repeat(257) }, 'secret'],
    [{ url: 'https://hooks.example.com/', secret: 12345678 }, 'secret'],
    [{ url: 'https://hooks.example.com/', active: 'yes' }, 'active'],
    [{ url: 'https://hooks.example.com/', events: ['failover.triggered'] }, 'events'],
  ])('POST %j → 422 naming %s', async (body, field) => {
    const r = await api(srv, 'POST', '/v1/webhooks', body, 'c');
    expect(r.status).toBe(422);
    expect(fieldsOf(r)).toContain(field);
  });

  it('rejects malformed bodies and bad PATCH fields', async () => {
    const bad = await api(srv, 'POST', '/v1/webhooks', '{"url": ', 'c');
    expect(bad.status).toBe(400);
    expect(fieldsOf(bad)).toEqual(['body']);
    const notObject = await api(srv, 'POST', '/v1/webhooks', [], 'c');
    expect(notObject.status).toBe(422);

    const id = (await api(srv, 'POST', '/v1/webhooks', { url: 'https://t3.example.com/h' }, 'c')).body.id;
    for (const [body, field] of [
      [{}, 'body'],
      [{ active: 'no' }, 'active'],
      [{ url: 'nope' }, 'url'],
      [{ event_types: [] }, 'event_types'],
      [{ event_types: ['x'] }, 'event_types[0]'],
      [{ secret: 'short' }, 'secret'],
      [{ id: 'wh_other' }, 'id'],
    ] as const) {
      const r = await api(srv, 'PATCH', `/v1/webhooks/${id}`, body, 'c');
      expect(r.status, JSON.stringify(body)).toBe(422);
      expect(fieldsOf(r)).toContain(field);
    }
    expect((await api(srv, 'GET', `/v1/webhooks/${id}`, undefined, 'c')).body.url).toBe('https://t3.example.com/h');
  });

  it('limits a tenant to 50 webhooks (422 LIMIT_EXCEEDED)', async () => {
    const have = (await api(srv, 'GET', '/v1/webhooks', undefined, 'b')).body.total;
    const creates = [];
    for (let i = have; i < 50; i++) creates.push(api(srv, 'POST', '/v1/webhooks', { url: `https://t2.example.com/${i}` }, 'b'));
    expect((await Promise.all(creates)).every((r) => r.status === 201)).toBe(true);
    const over = await api(srv, 'POST', '/v1/webhooks', { url: 'https://t2.example.com/51' }, 'b');
    expect(over.status).toBe(422);
    expect(over.body.error.code).toBe('LIMIT_EXCEEDED');
    expect((await api(srv, 'GET', '/v1/webhooks', undefined, 'b')).body.total).toBe(50);
    // other tenants are not affected
    expect((await api(srv, 'POST', '/v1/webhooks', { url: 'https://t1.example.com/more' }, 'a')).status).toBe(201);
  });

  it('documents the webhook endpoints in the OpenAPI document', async () => {
    const doc = await (await fetch(`${srv.base}/openapi.json`)).json();
    for (const p of [
      '/v1/webhooks',
      '/v1/webhooks/{webhook_id}',
      '/v1/webhooks/{webhook_id}/deliveries',
      '/v1/webhooks/{webhook_id}/deliveries/{delivery_id}',
      '/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver',
    ]) {
      expect(doc.paths[p], p).toBeDefined();
    }
    expect(Object.keys(doc.paths['/v1/webhooks/{webhook_id}']).sort()).toEqual(['delete', 'get', 'patch']);
    expect(doc.paths['/v1/webhooks'].post.description).toMatch(/defaults to all four/);
  });

  it('never writes a secret to the logs', async () => {
    expect(srv.output()).toContain('webhook created');
    expect(srv.output()).not.toContain(SECRET);
    expect(srv.output()).not.toContain('another-secret-1');
  });
});
