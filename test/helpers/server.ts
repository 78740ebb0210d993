/**
 * Starts the real compiled service (`node dist/src/main.js`) as a child process for
 * integration tests, on a free loopback port and, unless one is given, a fresh temporary
 * SERVICE_DATA_DIR.
 *
 *   import { afterAll, beforeAll } from 'vitest';
 *   import { startServer, stopAllServers, type TestServer } from '../helpers/server.js';
 *
 *   let s: TestServer;
 *   beforeAll(async () => { s = await startServer({ env: { SERVICE_API_KEYS: 'k1:acme' } }); });
 *   afterAll(stopAllServers);
 *   ...
 *   const r = await s.request('POST', '/v1/route', { country: 'US', currency: 'USD' }, { 'X-API-Key': 'k1' });
 *   expect(r.status).toBe(200);
 *
 * Restart on the same data: `await s.stop(); const s2 = await startServer({ dataDir: s.dataDir });`
 * Not waiting for it to answer (tests of its start-up): `spawnServer(opts)`.
 *
 * Cleanup: stopAllServers() (call it in afterAll) SIGKILLs every server still running and
 * removes the data directories the helper created. As a backstop, servers are SIGKILLed when
 * the test process exits, and each server stops itself if the test process dies (see
 * orphan-guard.cjs). The child's environment has no SERVICE_* variable from the parent's:
 * only what `env` sets, and SERVICE_JIT_WARM_UP=false unless `jitWarmUp` (StartOptions says why).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './free-port.js';
import { holdsPort } from './port-owner.js';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const MAIN_JS = join(REPO_ROOT, 'dist', 'src', 'main.js');
const ORPHAN_GUARD = fileURLToPath(new URL('./orphan-guard.cjs', import.meta.url));

export interface StartOptions {
  /** Extra environment (PORT and HOST are set by the helper). `undefined` removes a variable. */
  env?: Record<string, string | undefined>;
  /** Use this data directory (e.g. a previous server's, to restart on the same data). */
  dataDir?: string;
  /** How long to wait for `GET /` to answer. Default 30 s. */
  readyTimeoutMs?: number;
  /** Start it in a process group of its own (to signal the group: `process.kill(-pid, sig)`). */
  ownProcessGroup?: boolean;
  /**
   * Run the start-up JIT warm-up (SERVICE_JIT_WARM_UP, on by default in the service). Off here
   * unless asked: it only makes the first requests, cycles and scrapes run optimised code, it
   * changes no answer, and it cost each start ~0.7 s of CPU (1.1 against 1.8 s to answer on a
   * quiet 2-core machine), over the hundreds of servers the suite starts ~85 s of its ~580 s
   * on a busy one. jit-warm-up.test.ts and pool-priority.test.ts test the warm-up itself, with
   * it on; `env: { SERVICE_JIT_WARM_UP }` still decides when given.
   */
  jitWarmUp?: boolean;
}

/** A server process just spawned (spawnServer): not yet known to answer. */
export interface SpawnedServer {
  baseUrl: string;
  port: number;
  dataDir: string;
  proc: ChildProcess;
  /** Everything the server wrote to stdout and stderr so far (capped). */
  output(): string;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  /** The parsed body when it is JSON, else undefined. */
  json: any;
  text: string;
}

export interface TestServer {
  baseUrl: string;
  port: number;
  dataDir: string;
  proc: ChildProcess;
  /** Everything the server wrote to stdout and stderr so far (capped). */
  output(): string;
  /** Sends `signal` and resolves with the exit code (null if the process died of a signal). */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** SIGKILL, like `kill -9`; resolves once the process is gone. */
  kill9(): Promise<void>;
  /**
   * One HTTP request. An object or array body is sent as JSON with Content-Type
   * application/json; a string or Buffer is sent as is (with the same Content-Type unless
   * `headers` sets one).
   */
  request(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<TestResponse>;
}

const OUTPUT_CAP = 64 * 1024;
/** How long stop() waits after its signal before it SIGKILLs the server. */
const STOP_TIMEOUT_MS = 20_000;
const running = new Set<ChildProcess>();
const createdDirs = new Set<string>();

process.once('exit', () => {
  for (const p of running) p.kill('SIGKILL');
  for (const d of createdDirs) rmSync(d, { recursive: true, force: true });
});

/** Kills every server this process started that is still running, and removes created data dirs. */
export async function stopAllServers(): Promise<void> {
  await Promise.all([...running].map((p) => killAndWait(p, 'SIGKILL')));
  for (const d of createdDirs) rmSync(d, { recursive: true, force: true });
  createdDirs.clear();
}

/** A fresh empty directory under the OS temp dir, removed by stopAllServers(). */
export function makeTempDir(prefix = 'spine-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  createdDirs.add(dir);
  return dir;
}

function exited(p: ChildProcess): boolean {
  return p.exitCode !== null || p.signalCode !== null;
}

function waitExit(p: ChildProcess): Promise<number | null> {
  if (exited(p)) return Promise.resolve(p.exitCode);
  return new Promise((resolve) => p.once('exit', (code) => resolve(code)));
}

async function killAndWait(p: ChildProcess, signal: NodeJS.Signals): Promise<number | null> {
  if (exited(p)) return p.exitCode;
  const done = waitExit(p);
  p.kill(signal);
  return done;
}

function baseEnv(extra: Record<string, string | undefined>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith('SERVICE_')) env[k] = v;
  }
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

export async function startServer(opts: StartOptions = {}): Promise<TestServer> {
  const dataDir = opts.dataDir ?? makeTempDir();
  // The free port may be taken between the probe and the child's listen: try another one.
  for (let attempt = 1; ; attempt++) {
    try {
      return await launch(opts, dataDir);
    } catch (e) {
      if (attempt >= 3 || !/cannot listen/.test(String((e as Error).message))) throw e;
    }
  }
}

/**
 * Spawns the service on a free port without waiting for it (startServer waits until it
 * answers): for tests of what happens during its start-up. Killed by stopAllServers().
 */
export async function spawnServer(opts: StartOptions = {}): Promise<SpawnedServer> {
  if (!existsSync(MAIN_JS)) {
    throw new Error(`${MAIN_JS} is missing: build first (npx tsc -p tsconfig.json, or npm test, which builds)`);
  }
  const dataDir = opts.dataDir ?? makeTempDir();
  const port = await freePort();
  const warmUp = opts.jitWarmUp === true ? undefined : 'false'; // undefined: the service's default (on)
  const env = baseEnv({ SERVICE_JIT_WARM_UP: warmUp, ...opts.env, PORT: String(port), HOST: '127.0.0.1', SERVICE_DATA_DIR: dataDir });

  const proc = spawn(process.execPath, ['--require', ORPHAN_GUARD, MAIN_JS], {
    cwd: REPO_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: opts.ownProcessGroup === true,
  });
  running.add(proc);
  proc.once('exit', () => running.delete(proc));
  let out = '';
  const collect = (chunk: Buffer) => {
    out += chunk.toString('utf8');
    if (out.length > OUTPUT_CAP) out = out.slice(out.length - OUTPUT_CAP);
  };
  proc.stdout!.on('data', collect);
  proc.stderr!.on('data', collect);
  return { baseUrl: `http://127.0.0.1:${port}`, port, dataDir, proc, output: () => out };
}

async function launch(opts: StartOptions, dataDir: string): Promise<TestServer> {
  const readyTimeoutMs = opts.readyTimeoutMs ?? 30_000;
  const { baseUrl, port, proc, output } = await spawnServer({ ...opts, dataDir });

  const request = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<TestResponse> => {
    const h: Record<string, string> = { ...headers };
    let payload: string | Buffer | undefined;
    if (body !== undefined) {
      payload = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
      if (!Object.keys(h).some((k) => k.toLowerCase() === 'content-type')) h['Content-Type'] = 'application/json';
    }
    const res = await fetch(baseUrl + path, { method, headers: h, body: payload, signal: AbortSignal.timeout(20_000) });
    const text = await res.text();
    let json: unknown;
    if (text.length > 0 && (res.headers.get('content-type') ?? '').includes('json')) {
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
    }
    return { status: res.status, headers: res.headers, json, text };
  };

  // Ready when GET / answers 200; fail fast if the process exits first.
  const deadline = Date.now() + readyTimeoutMs;
  for (;;) {
    if (exited(proc)) {
      throw new Error(`server exited with code ${proc.exitCode} (signal ${proc.signalCode}) before answering; output:\n${output()}`);
    }
    try {
      const r = await fetch(baseUrl + '/', { signal: AbortSignal.timeout(2_000) });
      await r.arrayBuffer();
      // Ours, not another process that took the port first (port-owner.ts).
      if (r.status === 200 && holdsPort(proc.pid!, port) !== false) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await killAndWait(proc, 'SIGKILL');
      throw new Error(`server did not answer GET / on ${baseUrl} within ${readyTimeoutMs} ms; output:\n${output()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }

  return {
    baseUrl,
    port,
    dataDir,
    proc,
    output,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      const code = waitExit(proc);
      const t0 = Date.now();
      if (!exited(proc)) proc.kill(signal);
      // A server that does not stop within STOP_TIMEOUT_MS is killed; the test then sees a null code.
      let killed = false;
      const timer = setTimeout(() => {
        killed = true;
        proc.kill('SIGKILL');
      }, STOP_TIMEOUT_MS);
      try {
        const c = await code;
        // A null says only "a signal": say which, and whether this helper sent it, with the server's last words.
        if (c === null && signal !== 'SIGKILL') {
          const why = killed ? `did not stop within ${STOP_TIMEOUT_MS} ms of ${signal}: SIGKILLed by the test helper` : `died of ${proc.signalCode} ${Date.now() - t0} ms after ${signal}`;
          process.stderr.write(`test server on port ${port} ${why}; its last output:\n${output().slice(-4000)}\n`);
        }
        return c;
      } finally {
        clearTimeout(timer);
      }
    },
    async kill9() {
      await killAndWait(proc, 'SIGKILL');
    },
    request,
  };
}
