/**
 * src/fast-prototypes.ts: String.prototype (and the other prototypes the route path reads
 * through) must be in V8's fast mode in the running service. A dependency's
 * `class X extends String` (ioredis's VerbatimString) turns it into a dictionary, after which
 * every `s.charCodeAt(i)` on the route path is a generic property load and call.
 *
 * V8 only tells through its natives syntax, which a child process switches on with
 * v8.setFlagsFromString before compiling the probe; the service runs in that child, started
 * by startService() as main.js starts it, and answers a route over HTTP before the check.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/free-port.js';
import { REPO_ROOT } from '../helpers/server.js';

const DIST = join(REPO_ROOT, 'dist', 'src');
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** Module code run in a fresh node: defines fast(), which lists the hot prototypes V8 holds in dictionary mode. */
const PROBE = `
import v8 from 'node:v8';
v8.setFlagsFromString('--allow-natives-syntax');
const hasFast = new Function('o', 'return %HasFastProperties(o)');
const HOT = { String: String.prototype, Array: Array.prototype, Object: Object.prototype, Function: Function.prototype,
  Number: Number.prototype, Map: Map.prototype, Set: Set.prototype, Uint8Array: Uint8Array.prototype,
  TypedArray: Object.getPrototypeOf(Uint8Array.prototype), Buffer: Buffer.prototype };
const slow = () => Object.entries(HOT).filter(([, p]) => !hasFast(p)).map(([k]) => k);
`;

function runProbe(body: string, env: Record<string, string> = {}): Record<string, unknown> {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', PROBE + body], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  const line = r.stdout.trim().split('\n').pop() ?? '';
  if (!line.startsWith('{')) throw new Error(`probe failed (exit ${r.status}): ${r.stderr}`);
  return JSON.parse(line) as Record<string, unknown>;
}

describe('built-in prototypes stay fast', () => {
  it('loading the service slows String.prototype (the premise), and restoreFastPrototypes() undoes it for good', () => {
    const out = runProbe(`
await import(${JSON.stringify(join(DIST, 'service.js'))});
const afterImport = slow();
const { restoreFastPrototypes } = await import(${JSON.stringify(join(DIST, 'fast-prototypes.js'))});
restoreFastPrototypes();
const afterRestore = slow();
class LaterSubclass extends String {}
console.log(JSON.stringify({ afterImport, afterRestore, afterLaterSubclass: slow(), made: String(new LaterSubclass('x')) }));
`);
    expect(out.afterImport).toContain('String');
    expect(out.afterRestore).toEqual([]);
    expect(out.afterLaterSubclass).toEqual([]);
    expect(out.made).toBe('x');
  });

  it('the running service has every hot prototype fast while it routes', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'fastproto-'));
    dirs.push(dataDir);
    const port = await freePort();
    const out = runProbe(
      `
const { startService } = await import(${JSON.stringify(join(DIST, 'service.js'))});
const svc = await startService();
const base = 'http://127.0.0.1:' + svc.port;
const json = { 'content-type': 'application/json', 'x-api-key': 'kfast' };
const rule = await fetch(base + '/v1/rules', { method: 'POST', headers: json,
  body: JSON.stringify({ rule_id: 'r1', attributes: ['US', 'USD'], primary_id: 'stripe', secondary_id: 'adyen' }) });
const route = await fetch(base + '/v1/route', { method: 'POST', headers: json, body: JSON.stringify({ country: 'US', currency: 'USD' }) });
const decision = await route.json();
const result = { rule: rule.status, route: route.status, processor: decision.processor_id, slow: slow() };
await svc.stop();
console.log(JSON.stringify(result));
process.exit(0);
`,
      { SERVICE_DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', SERVICE_API_KEYS: 'kfast:acme', SERVICE_LOG_LEVEL: 'error' },
    );
    expect(out.rule).toBe(201);
    expect(out.route).toBe(200);
    expect(['stripe', 'adyen']).toContain(out.processor);
    expect(out.slow).toEqual([]);
  });
});
