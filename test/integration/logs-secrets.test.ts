/**
 * Logs never carry secrets: a session at debug level with authentication failures (wrong and
 * near-miss keys), webhooks created and re-keyed with secrets, deliveries that fail and
 * succeed, a redelivery, a failover, a URL with credentials, and a graceful stop; then the
 * server's whole stdout/stderr must contain no API key (configured or tried) and no webhook
 * secret. Also a start refused for a malformed SERVICE_API_KEYS does not print the key.
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAIN_JS, makeTempDir, REPO_ROOT, startServer, stopAllServers, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/until.js';

const KEY_A = 'klog-acme-5e2d9b71c4';
const KEY_ADMIN = 'klog-admin-0f8a3e6d21';
const WRONG_KEYS = ['klog-acme-5e2d9b71c', 'klog-acme-5e2d9b71c4x', 'KLOG-ACME-5E2D9B71C4', 'totally-wrong-key-8812', 'Bearer klog-acme-5e2d9b71c4'];
const SECRET_1 = 'whsec-first-6b1e0c9f3a';
const SECRET_2 = 'whsec-second-a07d4c2e88';
const SECRET_3 = 'whsec-third-19fe7733bd';
const URL_PASSWORD = 'urlpass-c81f00e2';

let s: TestServer;
let receiver: Server;
let failing = true;
let got = 0;


beforeAll(async () => {
  receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      got++;
      res.writeHead(failing ? 500 : 200).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  s = await startServer({
    env: {
      SERVICE_API_KEYS: `${KEY_A}:acme,${KEY_ADMIN}:ops:admin`,
      SERVICE_LOG_LEVEL: 'debug',
      SERVICE_WEBHOOK_ALLOW_PRIVATE: '1',
      SERVICE_WEBHOOK_BACKOFF_MS: '100,100',
      SERVICE_EVAL_INTERVAL_MS: '1000',
      SERVICE_RATE_LIMIT_RPS: '50',
    },
  });
});

afterAll(async () => {
  await stopAllServers();
  await new Promise((r) => receiver?.close(r));
});

describe('a session that handles keys and secrets', () => {
  it('runs: auth failures, webhooks with secrets, deliveries, failover, rate limiting', async () => {
    const port = (receiver.address() as { port: number }).port;
    const A = { 'x-api-key': KEY_A };
    for (const k of WRONG_KEYS) {
      const r = await s.request('GET', '/v1/rules', undefined, { 'x-api-key': k });
      expect(r.status).toBe(401);
      expect(r.text).not.toContain(k);
    }
    expect((await s.request('GET', '/v1/rules')).status).toBe(401);
    const hook = await s.request('POST', '/v1/webhooks', { url: `http://127.0.0.1:${port}/h1`, secret: SECRET_1 }, A);
    expect(hook.status).toBe(201);
    expect(hook.text).not.toContain(SECRET_1);
    const id = hook.json.id;
    expect((await s.request('PATCH', `/v1/webhooks/${id}`, { secret: SECRET_2 }, A)).status).toBe(200);
    const hook2 = await s.request('POST', '/v1/webhooks', { url: `http://127.0.0.1:${port}/h2`, secret: SECRET_3, event_types: ['failover.triggered'] }, A);
    expect(hook2.status).toBe(201);
    // A URL with credentials is refused, without echoing the password.
    const creds = await s.request('POST', '/v1/webhooks', { url: `https://user:${URL_PASSWORD}@hooks.example.com/x`, secret: SECRET_1 }, A);
    expect(creds.status).toBe(422);
    expect(creds.text).not.toContain(URL_PASSWORD);
    // A secret that is too short is refused without being echoed.
    const short = await s.request('POST', '/v1/webhooks', { url: `http://127.0.0.1:${port}/h3`, secret: 'shrt' }, A);
    expect(short.status).toBe(422);
    // A failover: deliveries to both webhooks fail (500), are retried, then a redelivery succeeds.
    expect((await s.request('POST', '/v1/rules', { rule_id: 'log_rule', attributes: ['US', 'USD'], primary_id: 'p1', secondary_id: 'p2' }, A)).status).toBe(201);
    for (let i = 0; i < 12; i++) {
      await s.request('POST', '/v1/outcome', { rule_id: 'log_rule', processor_id: 'p1', success: false, latency_ms: 10, error_code: 'timeout' }, A);
    }
    const failed = await until('a failed delivery', async () => {
      const r = await s.request('GET', `/v1/webhooks/${id}/deliveries?status=failed`, undefined, A);
      return r.json.deliveries.length > 0 && r.json.deliveries[0];
    });
    failing = false;
    expect((await s.request('POST', `/v1/webhooks/${id}/deliveries/${failed.id}/redeliver`, undefined, A)).status).toBe(202);
    await until('the redelivery', async () => {
      const r = await s.request('GET', `/v1/webhooks/${id}/deliveries/${failed.id}`, undefined, A);
      return r.json.status === 'delivered';
    });
    expect(got).toBeGreaterThanOrEqual(4);
    // Admin key use, and the rate limiter (429) on the admin key.
    expect((await s.request('GET', '/v1/tenants', undefined, { 'x-api-key': KEY_ADMIN })).status).toBe(200);
    let limited = false;
    for (let i = 0; i < 200 && !limited; i++) limited = (await s.request('GET', '/v1/stats', undefined, { 'x-api-key': KEY_ADMIN })).status === 429;
    expect(limited).toBe(true);
    expect((await s.request('DELETE', `/v1/webhooks/${id}`, undefined, A)).status).toBe(200);
    expect(await s.stop()).toBe(0);
  });

  it('the output holds log lines but no key and no secret', () => {
    const out = s.output();
    expect(out).toMatch(/webhook created/);
    expect(out).toMatch(/processor transition/);
    expect(out).toMatch(/webhook delivery attempt/);
    expect(out).toMatch(/service stopped/);
    for (const secret of [KEY_A, KEY_ADMIN, ...WRONG_KEYS, SECRET_1, SECRET_2, SECRET_3, URL_PASSWORD]) {
      expect(out, secret).not.toContain(secret);
    }
    // Not even a distinctive fragment of one.
    for (const secret of [KEY_A, KEY_ADMIN, SECRET_1, SECRET_2, SECRET_3]) expect(out).not.toContain(secret.slice(-10));
  });
});

describe('a refused start', () => {
  it('names the variable, not the key', async () => {
    const key = 'kbad-3c9d1e77f0a2';
    const proc = spawn(process.execPath, [MAIN_JS], {
      cwd: REPO_ROOT,
      env: { PATH: process.env.PATH ?? '', SERVICE_DATA_DIR: makeTempDir(), PORT: '0', SERVICE_API_KEYS: `${key}:acme:superuser,other-${key}:bad tenant!` },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    proc.stdout!.on('data', (c) => (out += c));
    proc.stderr!.on('data', (c) => (out += c));
    const code = await new Promise<number | null>((r) => proc.once('exit', r));
    expect(code).not.toBe(0);
    expect(out).toMatch(/SERVICE_API_KEYS/);
    expect(out).not.toContain(key);
  });
});
