/**
 * A probe loaded into the service for benchmarks (`node --import <this file> main.js`, Linux):
 * a 1 ms timer on the front thread notes, between two of its ticks, the wall time that passed
 * and the CPU time the front thread itself used (se.sum_exec_runtime of /proc/thread-self/sched,
 * read with one pread). A gap much longer than the timer's period is a route that waited:
 * when the front thread used the CPU all along, its own work held the loop (a block); when it
 * used little of it, another thread had the core (the thread was preempted). On SIGUSR2 it
 * appends what it saw since the last signal, as one JSON line, to PROBE_OUT, and starts over.
 * Reading the file costs ~10-20 µs a tick: the same in every phase a benchmark compares.
 */
import { appendFileSync, openSync, readSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';

/** A gap at least this long (ms) counts as a stall. */
const STALL_MS = 2;

export interface ProbeReport {
  /** Wall time covered, ms. */
  wallMs: number;
  /** Front-thread CPU, ms. */
  cpuMs: number;
  /** Gaps of at least STALL_MS: how many, their wall time, and the front thread's CPU in them. */
  stalls: number;
  stallMs: number;
  stallCpuMs: number;
  /** The longest gap and the front thread's CPU in it, ms. */
  maxGapMs: number;
  maxGapCpuMs: number;
  /** Stalls (gap, cpu) of at least 4 ms, the first 200. */
  long: [number, number][];
}

function start(out: string): void {
  const fd = openSync('/proc/thread-self/sched', 'r');
  const buf = Buffer.alloc(8192);
  const cpuMs = (): number => {
    const n = readSync(fd, buf, 0, buf.length, 0);
    const text = buf.toString('latin1', 0, n);
    const at = text.indexOf('se.sum_exec_runtime');
    return Number(text.slice(text.indexOf(':', at) + 1, text.indexOf('\n', at)));
  };
  const fresh = (): ProbeReport => ({ wallMs: 0, cpuMs: 0, stalls: 0, stallMs: 0, stallCpuMs: 0, maxGapMs: 0, maxGapCpuMs: 0, long: [] });
  let r = fresh();
  let lastWall = performance.now();
  let lastCpu = cpuMs();
  const tick = setInterval(() => {
    const wall = performance.now();
    const cpu = cpuMs();
    const gap = wall - lastWall;
    const used = cpu - lastCpu;
    lastWall = wall;
    lastCpu = cpu;
    r.wallMs += gap;
    r.cpuMs += used;
    if (gap >= STALL_MS) {
      r.stalls++;
      r.stallMs += gap;
      r.stallCpuMs += used;
      if (gap >= 4 && r.long.length < 200) r.long.push([Math.round(gap * 100) / 100, Math.round(used * 100) / 100]);
    }
    if (gap > r.maxGapMs) {
      r.maxGapMs = gap;
      r.maxGapCpuMs = used;
    }
  }, 1);
  tick.unref();
  process.on('SIGUSR2', () => {
    appendFileSync(out, JSON.stringify(r) + '\n');
    r = fresh();
  });
}

// Worker threads inherit --import: only the front thread is probed.
if (isMainThread && process.env.PROBE_OUT && process.platform === 'linux') start(process.env.PROBE_OUT);
