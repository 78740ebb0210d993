/**
 * Generates the traces of many descriptors, on worker threads when running compiled (each
 * trace is independent and seeded, so the result does not depend on the thread count or on
 * scheduling: results are returned in descriptor order). Under a TypeScript loader (tests)
 * worker files cannot be spawned, so it runs in-process.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { TraceDescriptor } from './dataset.js';
import { perturbStage } from './perturb.js';
import { buildScenario } from './scenario-spec.js';
import { generateTrace, type Sequence } from './traces.js';

export async function traceFor(d: TraceDescriptor): Promise<Sequence[]> {
  return generateTrace({
    family: d.family,
    scenario: buildScenario(d.scenario),
    rate: d.rate,
    seed: d.seed,
    primaryWeight: d.primaryWeight,
    ...(d.cuts && d.cuts.length > 0 && { stages: [perturbStage(d.cuts)] }),
  });
}

export async function generateAll(descs: readonly TraceDescriptor[], threads = availableParallelism()): Promise<Sequence[][]> {
  const workerUrl = new URL('./trace-worker.js', import.meta.url);
  const compiled = import.meta.url.endsWith('.js');
  if (!compiled || threads <= 1 || descs.length < 4) {
    const out: Sequence[][] = [];
    for (const d of descs) out.push(await traceFor(d));
    return out;
  }
  const results: Sequence[][] = new Array(descs.length);
  let next = 0;
  const runWorker = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const w = new Worker(workerUrl);
      const feed = (): void => {
        if (next >= descs.length) {
          void w.terminate().then(() => resolve());
          return;
        }
        const id = next++;
        w.postMessage({ id, desc: descs[id] });
      };
      w.on('message', (m: { id: number; seqs: Sequence[] }) => {
        results[m.id] = m.seqs;
        feed();
      });
      w.on('error', reject);
      feed();
    });
  await Promise.all(Array.from({ length: Math.min(threads, descs.length) }, runWorker));
  return results;
}
