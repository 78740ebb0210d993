/**
 * Start-up the owner can rely on: one process per port and per data directory (a second one
 * exits non-zero naming the port / the directory and the holder's pid), a stale lock of a
 * killed process does not block the next start, `npm start` never rebuilds a current build
 * (two at once from one checkout both come up), and SERVICE_API_KEYS set but empty stops the
 * start while unset is development mode with a warning.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/free-port.js';
import { MAIN_JS, makeTempDir, REPO_ROOT, startServer, stopAllServers, type TestServer } from '../helpers/server.js';
import { until } from '../helpers/until.js';

const extra = new Set<ChildProcess>();

afterAll(async () => {
  for (const p of extra) if (p.exitCode === null && p.signalCode === null && p.pid) process.kill(-p.pid, 'SIGKILL');
  await stopAllServers();
});

/** Runs the service with `env` (on top of PATH only) and resolves with its exit code and output. */
function runToExit(env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  const proc = spawn(process.execPath, [MAIN_JS], { cwd: REPO_ROOT, env: { PATH: process.env.PATH ?? '', SERVICE_LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.on('data', (c) => (out += c));
  proc.stderr!.on('data', (c) => (out += c));
  const timer = setTimeout(() => proc.kill('SIGKILL'), 30_000);
  return new Promise((resolve) =>
    proc.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    }),
  );
}

describe('one process per port and per data directory', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startServer({ env: { SERVICE_LOG_LEVEL: 'warn' } });
  });

  it('a second process on the same port exits non-zero naming the port; the first keeps serving', async () => {
    const r = await runToExit({ PORT: String(s.port), HOST: '127.0.0.1', SERVICE_DATA_DIR: makeTempDir() });
    expect(r.code).toBe(1);
    expect(r.out).toContain(`cannot listen on 127.0.0.1:${s.port}`);
    expect((await s.request('GET', '/')).status).toBe(200);
  });

  it('a second process on the same data directory exits non-zero naming the directory and the holder pid', async () => {
    const r = await runToExit({ PORT: String(await freePort()), HOST: '127.0.0.1', SERVICE_DATA_DIR: s.dataDir });
    expect(r.code).toBe(1);
    expect(r.out).toContain(`data directory ${s.dataDir} is in use`);
    expect(r.out).toContain(`pid ${s.proc.pid}`);
    expect((await s.request('GET', '/')).status).toBe(200);
  });

  it('the lock of a killed process does not block the next start on its directory', async () => {
    const rule = { rule_id: 'kept', attributes: ['US'], primary_id: 'a', secondary_id: 'b' };
    expect((await s.request('POST', '/v1/rules', rule)).status).toBe(201);
    await s.kill9();
    expect(existsSync(join(s.dataDir, 'service.lock'))).toBe(true); // left behind by SIGKILL
    s = await startServer({ dataDir: s.dataDir, env: { SERVICE_LOG_LEVEL: 'warn' } });
    expect((await s.request('GET', '/v1/rules')).json.map((r: { rule_id: string }) => r.rule_id)).toEqual(['kept']);
    expect(readFileSync(join(s.dataDir, 'service.lock'), 'utf8')).toMatch(new RegExp(`^${s.proc.pid} `));
    // A graceful stop removes it.
    expect(await s.stop()).toBe(0);
    expect(existsSync(join(s.dataDir, 'service.lock'))).toBe(false);
  });
});

describe('npm start', () => {
  it('does not rebuild a current build: two started at once from one checkout both come up', async () => {
    const starts = await Promise.all(
      [0, 1].map(async () => {
        const port = await freePort();
        // detached: its own process group, so npm and the node it runs are stopped together.
        const proc = spawn('npm', ['start', '--silent'], {
          cwd: REPO_ROOT,
          detached: true,
          env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', PORT: String(port), HOST: '127.0.0.1', SERVICE_DATA_DIR: makeTempDir(), SERVICE_LOG_LEVEL: 'warn' },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        extra.add(proc);
        let out = '';
        proc.stdout!.on('data', (c) => (out += c));
        proc.stderr!.on('data', (c) => (out += c));
        return { proc, port, out: () => out };
      }),
    );
    for (const st of starts) {
      await until(`npm start on ${st.port} answers`, async () => {
        if (st.proc.exitCode !== null) throw new Error(`npm start exited ${st.proc.exitCode}: ${st.out()}`);
        try {
          return (await fetch(`http://127.0.0.1:${st.port}/`, { signal: AbortSignal.timeout(2000) })).status === 200;
        } catch {
          return false;
        }
      }, 60_000);
      expect(st.out()).not.toMatch(/compiled into dist/); // the build was current: no tsc run
    }
    for (const st of starts) {
      const exited = new Promise((r) => st.proc.once('exit', r));
      process.kill(-st.proc.pid!, 'SIGTERM');
      await exited;
    }
  }, 90_000);

  it('package.json has no prestart hook (a build on every start is what raced)', () => {
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8'));
    expect(pkg.scripts.prestart).toBeUndefined();
    expect(pkg.scripts.prepare).toMatch(/--if-stale/);
  });
});

describe('SERVICE_API_KEYS', () => {
  it('set but empty stops the start, naming the variable', async () => {
    for (const value of ['', '  ', ' , ']) {
      const r = await runToExit({ PORT: '0', HOST: '127.0.0.1', SERVICE_DATA_DIR: makeTempDir(), SERVICE_API_KEYS: value });
      expect({ value, code: r.code }).toEqual({ value, code: 2 });
      expect(r.out).toMatch(/configuration error: SERVICE_API_KEYS/);
    }
  });

  it('unset is development mode, announced with a warning at start', async () => {
    const d = await startServer({ env: { SERVICE_LOG_LEVEL: 'info' } });
    expect(d.output()).toMatch(/"level":"warn","msg":"development mode: SERVICE_API_KEYS is not set/);
    expect((await d.request('GET', '/v1/rules')).status).toBe(200);
  });
});
