/**
 * One measured wrk run against one server, with what `npm run bench`, `bench:tail` and
 * `bench:compare` read around it: the server's CPU (and the kernel's part of it), the wake-ups
 * wrk's core received, the CPU every other process used and the hypervisor's steal (each
 * caller keeps what it reports). The caller has given the server its turn already: every other
 * benchmark server stopped (turn-taking.ts).
 *
 * A generator held off its core: wrk shares its core with the benchmark's own process and with
 * whatever the machine runs there. While wrk waits for its core, the answers that came in wait
 * unread and are counted as the server's latency, for every request in flight: in 1 s runs
 * against bare uWS here, wrk's waits of 40-160 ms in a slice went with a p99 of 5-16 ms, against
 * 1.4-2.8 ms in the slices where it waited 3-9 ms (the kernel's run-queue time of wrk's load
 * thread, wrk.ts). Other processes' CPU, summed over the whole machine, does not show it: 0.04
 * of a core is under any threshold and, on wrk's core, is most of a slice's p99. So a slice in
 * which wrk waited longer than GENERATOR_HELD_SHARE of it is taken again, up to `attempts`
 * times, for bare and the service alike; the refused takes are counted, and the slice kept
 * says whether it was still held.
 */
import { allProcessesCpu, othersByProcess, othersCpuS, processCpuS, processKernelCpuS, stealS, type OtherProcessCpu } from './cpu-usage.js';
import { wakeUps } from './interrupts.js';
import type { BenchRequest } from './requests.js';
import { runWrk, type WrkResult } from './wrk.js';

/** A slice whose generator waited for its core longer than this share of the slice was held (BENCH_GENERATOR_HELD). */
export const GENERATOR_HELD_SHARE = Number(process.env.BENCH_GENERATOR_HELD ?? 0.02);
/** Takes of a slice at most while its generator is held (BENCH_SLICE_ATTEMPTS). */
export const SLICE_ATTEMPTS = Number(process.env.BENCH_SLICE_ATTEMPTS ?? 3);

export interface Slice {
  wrk: WrkResult;
  serverCpuS: number;
  serverKernelCpuS: number;
  /** NaN where /proc/interrupts or a one-CPU generator pinning is missing. */
  generatorWakeUps: number;
  othersCpuS: number;
  /** The other processes that used CPU during the slice (what makes up othersCpuS), to name them. */
  others: OtherProcessCpu[];
  stealS: number;
  /** Takes of this slice refused before it because wrk was held off its core (each one's wait, s). */
  refusedWaitsS: number[];
  /** This take's generator was held too (the attempts ran out); false where the wait is unknown. */
  held: boolean;
}

export interface SliceOptions {
  /** Names the run in the error thrown on a non-2xx answer or a socket error. */
  label: string;
  pid: number;
  url: string;
  requests: readonly BenchRequest[];
  durationS: number;
  connections: number;
  /** The CPU wrk is pinned to (taskset list). */
  generatorCpu: string;
  /** Takes at most while wrk is held off its core (default SLICE_ATTEMPTS; 1 for a run that cannot be repeated as it was). */
  attempts?: number;
}

/** Whether wrk waited for its core longer than GENERATOR_HELD_SHARE of its run (never when the wait is unknown). */
export function generatorHeld(w: Pick<WrkResult, 'generatorWaitS' | 'durationS'>, share = GENERATOR_HELD_SHARE): boolean {
  return w.generatorWaitS > share * w.durationS;
}

export async function measuredSlice(o: SliceOptions): Promise<Slice> {
  const refusedWaitsS: number[] = [];
  const attempts = Math.max(1, o.attempts ?? SLICE_ATTEMPTS);
  for (let attempt = 1; ; attempt++) {
    const s = await takeOnce(o);
    const held = generatorHeld(s.wrk);
    if (!held || attempt >= attempts) return { ...s, refusedWaitsS, held };
    refusedWaitsS.push(s.wrk.generatorWaitS);
  }
}

async function takeOnce(o: SliceOptions): Promise<Omit<Slice, 'refusedWaitsS' | 'held'>> {
  const serverBefore = processCpuS(o.pid) ?? NaN;
  const kernelBefore = processKernelCpuS(o.pid) ?? NaN;
  const wakeUpsBefore = wakeUps(o.generatorCpu) ?? NaN;
  const before = allProcessesCpu();
  const stealBefore = stealS();
  const w = await runWrk({ url: o.url, requests: o.requests, durationS: o.durationS, connections: o.connections, cpus: o.generatorCpu });
  const stealAfter = stealS();
  const after = allProcessesCpu();
  const serverCpuS = (processCpuS(o.pid) ?? NaN) - serverBefore;
  const serverKernelCpuS = (processKernelCpuS(o.pid) ?? NaN) - kernelBefore;
  const generatorWakeUps = (wakeUps(o.generatorCpu) ?? NaN) - wakeUpsBefore;
  if (w.errors > 0 || w.non2xx > 0) throw new Error(`${o.label} run: ${w.non2xx} non-2xx answers, ${w.errors} socket errors`);
  const others = othersByProcess(before, after, new Set([process.pid, o.pid, w.wrapperPid]));
  return {
    wrk: w,
    serverCpuS,
    serverKernelCpuS,
    generatorWakeUps,
    othersCpuS: othersCpuS(others),
    others: others.filter((p) => p.cpuS > 0),
    stealS: stealBefore === null || stealAfter === null ? 0 : stealAfter - stealBefore,
  };
}
