/**
 * One measured wrk run against one server, with what `npm run bench`, `bench:tail` and
 * `bench:compare` read around it: the server's CPU (and the kernel's part of it), the wake-ups
 * wrk's core received, the CPU every other process used and the hypervisor's steal (each
 * caller keeps what it reports). The caller has given the server its turn already: every other
 * benchmark server stopped (turn-taking.ts).
 */
import { allProcessesCpu, othersCpuS, processCpuS, processKernelCpuS, stealS } from './cpu-usage.js';
import { wakeUps } from './interrupts.js';
import type { BenchRequest } from './requests.js';
import { runWrk, type WrkResult } from './wrk.js';

export interface Slice {
  wrk: WrkResult;
  serverCpuS: number;
  serverKernelCpuS: number;
  /** NaN where /proc/interrupts or a one-CPU generator pinning is missing. */
  generatorWakeUps: number;
  othersCpuS: number;
  stealS: number;
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
}

export async function measuredSlice(o: SliceOptions): Promise<Slice> {
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
  return {
    wrk: w,
    serverCpuS,
    serverKernelCpuS,
    generatorWakeUps,
    othersCpuS: othersCpuS(before, after, new Set([process.pid, o.pid, w.wrapperPid])),
    stealS: stealBefore === null || stealAfter === null ? 0 : stealAfter - stealBefore,
  };
}
