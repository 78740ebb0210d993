/** Worker thread of generate.ts: one trace per message. */
import { parentPort } from 'node:worker_threads';
import type { TraceDescriptor } from './dataset.js';
import { traceFor } from './generate.js';

parentPort?.on('message', (m: { id: number; desc: TraceDescriptor }) => {
  void traceFor(m.desc).then((seqs) => {
    const transfer = seqs.flatMap((s) => [s.t.buffer, s.x.buffer, s.y.buffer, s.mask.buffer]) as ArrayBuffer[];
    parentPort?.postMessage({ id: m.id, seqs }, transfer);
  });
});
