/**
 * Bursts on a core shared with the front thread (src/engine/worker/bursts.ts): in a child
 * process pinned to one CPU, a worker thread reniced like a pool thread (priority.ts) works in
 * bursts beside a busy main thread, which notes every moment it was off the CPU. Gaps closer
 * together than a tenth of a millisecond make one stall: the main thread ran too briefly
 * between them to answer anything. With the token sleep of a machine with more CPUs
 * (PAUSE_MS), the kernel handed the core back to the woken worker at once, so its bursts came
 * back to back and the stalls were several bursts long (measured here: ~0.9 ms); with the
 * shared-core sleep, one stall is one burst. And the choice follows the affinity mask, as
 * `taskset` sets it: one CPU gets the long sleep, two the token one.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BURST_MS, PAUSE_MS, pauseMsFor, SHARED_CORE_PAUSE_MS } from '../../src/engine/worker/bursts.js';

const BURSTS = fileURLToPath(new URL('../../dist/src/engine/worker/bursts.js', import.meta.url));
const PRIORITY = fileURLToPath(new URL('../../dist/src/engine/worker/priority.js', import.meta.url));

interface StallReport {
  /** The worker's pause, ms, and its bursts over the run. */
  pauseMs: number;
  pauses: number;
  /** The main thread's stalls (ms), longest first. */
  stalls: number[];
}

/** `pause`: 'default' (what the Bursts constructor chooses) or a number of ms. */
function stallsBesideBursts(cpus: string, pause: string, workMs = 400): StallReport {
  const script = `
    import { Worker } from 'node:worker_threads';
    const worker = new Worker(\`
      // ESM, as the process's --input-type says.
      const { parentPort } = await import('node:worker_threads');
      const { Bursts, BURST_MS } = await import(${JSON.stringify(BURSTS)});
      const { lowerThreadPriority } = await import(${JSON.stringify(PRIORITY)});
      lowerThreadPriority();
      const b = ${pause === 'default' ? 'new Bursts()' : `new Bursts(BURST_MS, ${Number(pause)})`};
      parentPort.postMessage({ ready: true });
      const until = performance.now() + ${workMs};
      b.begin();
      let x = 0;
      while (performance.now() < until) {
        for (let i = 0; i < 2000; i++) x = (x + i * 7) % 1000003; // ~10 µs, a judged rule's order
        b.pause();
      }
      parentPort.postMessage({ done: true, pauseMs: b.pauseMs, pauses: b.pauses, x });
    \`, { eval: true });
    await new Promise((r) => worker.once('message', r));
    const gaps = [];
    let last = performance.now();
    let result = null;
    worker.once('message', (m) => (result = m));
    const until = performance.now() + ${workMs};
    while (performance.now() < until) {
      const t = performance.now();
      if (t - last > 0.05) gaps.push([last, t]);
      last = t;
    }
    while (result === null) await new Promise((r) => setImmediate(r));
    // Gaps with less than 0.1 ms of the main thread's own between them are one stall.
    const stalls = [];
    for (const [a, b] of gaps) {
      const s = stalls[stalls.length - 1];
      if (s && a - s[1] < 0.1) s[1] = b;
      else stalls.push([a, b]);
    }
    const ms = stalls.map(([a, b]) => b - a).sort((p, q) => q - p);
    console.log(JSON.stringify({ pauseMs: result.pauseMs, pauses: result.pauses, stalls: ms }));
    process.exit(0);`;
  const out = execFileSync('taskset', ['-c', cpus, process.execPath, '--input-type=module', '-e', script], { encoding: 'utf8' });
  return JSON.parse(out.trim()) as StallReport;
}

/** The median stall, ms. */
const median = (r: StallReport) => r.stalls[r.stalls.length >> 1] ?? 0;

describe('pauseMsFor', () => {
  it('sleeps three bursts long on one CPU, a token sleep with more', () => {
    expect(SHARED_CORE_PAUSE_MS).toBe(3 * BURST_MS);
    expect(pauseMsFor(1)).toBe(SHARED_CORE_PAUSE_MS);
    expect(pauseMsFor(2)).toBe(PAUSE_MS);
    expect(pauseMsFor(64)).toBe(PAUSE_MS);
  });
});

// taskset is util-linux's, on every Debian system: without it these runs fail (ENOENT), they do not skip.
describe('Bursts on a core shared with the front thread', () => {
  it('follows the affinity mask: one CPU chooses the shared-core sleep, two the token one', () => {
    expect(stallsBesideBursts('0', 'default', 50).pauseMs).toBe(SHARED_CORE_PAUSE_MS);
    expect(stallsBesideBursts('0,1', 'default', 50).pauseMs).toBe(PAUSE_MS);
  }, 60_000);

  it('holds the main thread one burst at a time, where the token sleep let bursts come back to back', () => {
    const shared = stallsBesideBursts('0', 'default');
    const token = stallsBesideBursts('0', String(PAUSE_MS));
    expect(shared.pauseMs).toBe(SHARED_CORE_PAUSE_MS);
    // The worker did work beside the main thread in both runs.
    expect(shared.pauses).toBeGreaterThan(50);
    expect(token.pauses).toBeGreaterThan(50);
    // One burst (measured: 0.27-0.28 ms at the median, the worker's share ~28% of the core);
    // the token sleep's stalls were three bursts (0.91-0.95 ms) for the same share.
    expect(median(shared)).toBeLessThan(0.5);
    expect(median(token)).toBeGreaterThan(median(shared) * 1.5);
  }, 60_000);
});
