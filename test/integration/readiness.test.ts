/**
 * GET /ready against the compiled service, in-process (the faults are injected into the
 * running instance): 200 when the store takes writes, the worker pool answers and the cycle
 * is current; 503 naming the store when writes fail, the worker pool when it is stopped, and
 * back to 200 once they recover. GET / stays 200 throughout (liveness is not readiness).
 * Build first: `npx tsc -p tsconfig.json`.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../helpers/until.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
const { loadConfig } = (await import('../../dist/src/config.js')) as any;
const { startService } = (await import('../../dist/src/service.js')) as any;

let svc: { port: number; app: any; stop(): Promise<void> };
const dir = mkdtempSync(join(tmpdir(), 'readiness-'));
const INTERVAL_MS = 200;

beforeAll(async () => {
  svc = await startService(
    loadConfig({ PORT: '0', HOST: '127.0.0.1', SERVICE_DATA_DIR: dir, SERVICE_LOG_LEVEL: 'error', SERVICE_EVAL_INTERVAL_MS: String(INTERVAL_MS) }),
  );
});
afterAll(async () => {
  await svc?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function get(path: string): Promise<{ status: number; body: any }> {
  const r = await fetch(`http://127.0.0.1:${svc.port}${path}`);
  return { status: r.status, body: await r.json() };
}

const REPO = new URL('../../', import.meta.url);

/** The Dockerfile's HEALTHCHECK command (exec form), run here against the service; resolves with its exit code. */
function runHealthcheck(): Promise<number> {
  const dockerfile = readFileSync(new URL('Dockerfile', REPO), 'utf8').replace(/\\\n\s*/g, '');
  const cmd = JSON.parse(/^HEALTHCHECK .*?CMD (\[.*\])$/m.exec(dockerfile)![1]) as string[];
  return new Promise((resolve) => {
    execFile(cmd[0] === 'node' ? process.execPath : cmd[0], cmd.slice(1), { env: { ...process.env, PORT: String(svc.port) }, timeout: 10_000 }, (err) =>
      resolve(err ? ((err as { code?: number }).code ?? 1) : 0),
    );
  });
}

/** The scheduler's task runner (the piscina pool), swapped to simulate a stopped pool. */
const scheduler = () => svc.app.engine.scheduler;

describe('GET /ready', () => {
  it('is 200 with every check ok on a healthy instance', async () => {
    const r = await get('/ready');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: 'ready', not_ready: [], checks: { store: { ok: true }, worker_pool: { ok: true }, evaluation: { ok: true } } });
  });

  it('is 503 naming the store when it does not take writes, and 200 again once it does', async () => {
    const store = svc.app.store;
    const real = store.checkWritable;
    store.checkWritable = () => Promise.reject(new Error('MDB_MAP_FULL: Environment mapsize limit reached'));
    try {
      const r = await get('/ready');
      expect(r.status).toBe(503);
      expect(r.body.not_ready).toEqual(['store']);
      expect(r.body.checks.store.message).toContain('MDB_MAP_FULL');
      expect((await get('/')).status).toBe(200);
    } finally {
      store.checkWritable = real;
    }
    expect((await get('/ready')).status).toBe(200);
  });

  it('is 503 naming the worker pool and the evaluation when the pool is stopped, and 200 again once it answers', async () => {
    const sch = scheduler();
    const real = sch.runner;
    sch.runner = { run: () => Promise.reject(new Error('the pool is terminated')), destroy: () => Promise.resolve() };
    try {
      const r = await get('/ready');
      expect(r.status).toBe(503);
      expect(r.body.not_ready).toContain('worker_pool');
      expect(r.body.checks.worker_pool.message).toContain('terminated');
    } finally {
      sch.runner = real;
    }
    expect((await get('/ready')).status).toBe(200);
  });

  it('is 503 naming the evaluation when no cycle finished within 3 intervals', async () => {
    // The first cycle ends one interval after the start; the earlier tests may finish sooner.
    await until('a finished evaluation cycle', () => svc.app.engine.stats().lastCycleEndMs > 0, 10_000);
    const engine = svc.app.engine;
    const realStats = engine.stats;
    engine.stats = () => ({ ...realStats.call(engine), lastCycleEndMs: Date.now() - 4 * INTERVAL_MS });
    try {
      const r = await get('/ready');
      expect(r.status).toBe(503);
      expect(r.body.not_ready).toEqual(['evaluation']);
      expect(r.body.checks.evaluation.message).toMatch(/no evaluation cycle finished/);
    } finally {
      engine.stats = realStats;
    }
    expect((await get('/ready')).status).toBe(200);
  });
});

describe('Docker image', () => {
  it('has a HEALTHCHECK on /ready that passes when ready and fails when not', async () => {
    expect(await runHealthcheck()).toBe(0);
    const store = svc.app.store;
    const real = store.checkWritable;
    store.checkWritable = () => Promise.reject(new Error('ENOSPC'));
    try {
      expect(await runHealthcheck()).toBe(1);
    } finally {
      store.checkWritable = real;
    }
  });

  it('ships no bench code and no tests (.dockerignore, runtime stage)', () => {
    const ignore = readFileSync(new URL('.dockerignore', REPO), 'utf8').split('\n');
    for (const p of ['bench', 'test', 'node_modules', 'dist', 'data', '.git']) expect(ignore, p).toContain(p);
    const dockerfile = readFileSync(new URL('Dockerfile', REPO), 'utf8');
    expect(dockerfile).not.toMatch(/^COPY .*bench/m);
    const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
    expect(runtime).not.toMatch(/COPY --from=build \/app\/dist \.\/dist/);
    expect(runtime).toMatch(/COPY --from=build \/app\/dist\/src/);
  });
});
