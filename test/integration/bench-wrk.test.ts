/**
 * The HTTP benchmark's load generator, end to end: wrk (the real binary) against the compiled
 * bare uWS ceiling, with the Lua hook bench/lib/wrk.ts writes. The run's percentile grid must
 * cover its requests and agree with wrk's own p50 and p99, or `npm run bench` would pool slices
 * from figures that are not wrk's. wrk (Debian package) is installed when missing, as .ci/run
 * does: the test runs or fails, it never skips.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { pooledPercentileMs, QUANTILE_GRID } from '../../bench/lib/latency-quantiles.js';
import { GENERATOR_HELD_SHARE, generatorHeld, measuredSlice } from '../../bench/lib/measured-slice.js';
import { startChild, type Child } from '../../bench/lib/processes.js';
import { runWrk } from '../../bench/lib/wrk.js';
import { ensureDebianPackage } from '../helpers/debian-package.js';
import { REPO_ROOT } from '../helpers/server.js';

ensureDebianPackage('wrk', 'wrk'); // installed when missing: these cases run or fail, they never skip

let bare: Child | null = null;
let spinner: ChildProcess | null = null;
afterAll(async () => {
  spinner?.kill('SIGKILL');
  await bare?.stop();
});

/** A busy loop pinned to `cpu` (taskset is util-linux's: without it this fails, it does not skip). */
function spinOn(cpu: string): ChildProcess {
  return spawn('taskset', ['-c', cpu, process.execPath, '-e', 'for (;;) {}'], { stdio: 'ignore' });
}

describe('wrk with the benchmark hook', () => {
  it("reports requests, errors and a percentile grid that matches wrk's own p50 and p99", async () => {
    bare = await startChild(join(REPO_ROOT, 'dist/bench/bare-uws.js'), { BARE_BODY: '{"processor_id":"p1"}' }, 30_000);
    const body = JSON.stringify({ country: 'US', currency: 'USD', payment_method: 'card', amount: 42 });
    const w = await runWrk({ url: bare.url, requests: [{ method: 'POST', path: '/v1/route', headers: { 'x-api-key': 'k' }, body }], durationS: 1, connections: 8 });
    expect(w.requests).toBeGreaterThan(100);
    expect(w.errors).toBe(0);
    expect(w.non2xx).toBe(0);
    expect(w.latency.count).toBe(w.requests);
    expect(w.latency.us).toHaveLength(QUANTILE_GRID.length);
    for (let i = 1; i < w.latency.us.length; i++) expect(w.latency.us[i]).toBeGreaterThanOrEqual(w.latency.us[i - 1]);
    expect(pooledPercentileMs([w.latency], 50)).toBe(w.p50Ms);
    expect(pooledPercentileMs([w.latency], 99)).toBe(w.p99Ms);
  });

  it("reads how long wrk's load thread waited for its core, and a slice whose wrk was held is taken again", async () => {
    bare ??= await startChild(join(REPO_ROOT, 'dist/bench/bare-uws.js'), { BARE_BODY: '{"processor_id":"p1"}' }, 30_000);
    const requests = [{ method: 'POST', path: '/v1/route', headers: {}, body: '{}' }];
    const alone = await runWrk({ url: bare.url, requests, durationS: 1, connections: 8, cpus: '0' });
    expect(Number.isFinite(alone.generatorWaitS)).toBe(true);
    expect(alone.generatorWaitS).toBeGreaterThanOrEqual(0);
    expect(alone.generatorWaitS).toBeLessThan(alone.durationS);

    // A busy loop on wrk's core takes about half of it: wrk waits for it most of the run's other half.
    spinner = spinOn('0');
    await new Promise((r) => setTimeout(r, 200));
    const held = await runWrk({ url: bare.url, requests, durationS: 1, connections: 8, cpus: '0' });
    expect(held.generatorWaitS).toBeGreaterThan(0.2 * held.durationS);
    expect(generatorHeld(held)).toBe(true);

    // measuredSlice takes it again while held, and says so when the attempts run out.
    const s = await measuredSlice({ label: 'bare', pid: bare.proc.pid!, url: bare.url, requests, durationS: 1, connections: 8, generatorCpu: '0', attempts: 2 });
    expect(s.refusedWaitsS).toHaveLength(1);
    expect(s.refusedWaitsS[0]).toBeGreaterThan(GENERATOR_HELD_SHARE);
    expect(s.held).toBe(true);
    spinner.kill('SIGKILL');
    spinner = null;
  }, 30_000);

  it('counts a generator held for more than GENERATOR_HELD_SHARE of its run, and never an unknown wait', () => {
    expect(generatorHeld({ generatorWaitS: 0.5 * GENERATOR_HELD_SHARE, durationS: 1 })).toBe(false);
    expect(generatorHeld({ generatorWaitS: 2 * GENERATOR_HELD_SHARE, durationS: 1 })).toBe(true);
    expect(generatorHeld({ generatorWaitS: 2 * GENERATOR_HELD_SHARE, durationS: 5 })).toBe(false);
    expect(generatorHeld({ generatorWaitS: NaN, durationS: 1 })).toBe(false);
  });
});
