/**
 * Preloaded into a service by `npm run bench:alloc` (`node --import <this file>`): V8's
 * sampling heap profiler, told to keep the samples of objects the garbage collector has
 * already freed, so that it counts what a request *allocates*, not what it leaves alive (the
 * profiler's default, which shows nothing of a request's garbage). SIGUSR2 starts sampling;
 * SIGWINCH stops it and writes the profile (JSON) to BENCH_HEAP_PROFILE_OUT. Both signals are
 * free in the service (it stops on SIGTERM, SIGINT and SIGHUP).
 */
import { Session } from 'node:inspector';
import { writeFileSync } from 'node:fs';

/** Bytes between two samples (V8 draws the gaps around this mean; smaller is finer and slower). */
const SAMPLING_INTERVAL_BYTES = 32;

const out = process.env.BENCH_HEAP_PROFILE_OUT;
if (out !== undefined && out !== '') {
  const session = new Session();
  session.connect();
  process.on('SIGUSR2', () => {
    session.post('HeapProfiler.startSampling', {
      samplingInterval: SAMPLING_INTERVAL_BYTES,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
  });
  process.on('SIGWINCH', () => {
    session.post('HeapProfiler.stopSampling', (err, r) => {
      writeFileSync(out, err ? JSON.stringify({ error: err.message }) : JSON.stringify(r.profile));
    });
  });
}
