/**
 * The HTTP benchmark's load generator, end to end: wrk (the real binary) against the compiled
 * bare uWS ceiling, with the Lua hook bench/lib/wrk.ts writes. The run's percentile grid must
 * cover its requests and agree with wrk's own p50 and p99, or `npm run bench` would pool slices
 * from figures that are not wrk's. wrk (Debian package) is installed when missing, as .ci/run
 * does: the test runs or fails, it never skips.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { pooledPercentileMs, QUANTILE_GRID } from '../../bench/lib/latency-quantiles.js';
import { startChild, type Child } from '../../bench/lib/processes.js';
import { runWrk } from '../../bench/lib/wrk.js';
import { ensureDebianPackage } from '../helpers/debian-package.js';
import { REPO_ROOT } from '../helpers/server.js';

ensureDebianPackage('wrk', 'wrk'); // installed when missing: these cases run or fail, they never skip

let bare: Child | null = null;
afterAll(async () => {
  await bare?.stop();
});

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
});
