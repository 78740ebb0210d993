/**
 * Who took the core from the service's front thread (Linux, `perf`, root or
 * perf_event_paranoid ≤ 1): the kernel's sched_switch events on the server's core are recorded
 * during a run; every time the front thread was switched out while it could still run (a
 * preemption, prev_state R), the time until it ran again is charged to the threads that ran
 * meanwhile: the service's own (pool, render thread, other helpers such as V8's compiler and
 * GC threads) or other processes. Unlike wall-clock latency this separates what the service
 * does to itself from what a busy machine does to it.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export type ThreadClass = 'pool' | 'render' | 'helper' | 'foreign';

export interface Preemptions {
  /** Preemptions of the front thread, and their total length, ms. */
  count: number;
  totalMs: number;
  /** Time charged to each class of thread, ms. */
  byClass: Record<ThreadClass, number>;
  /** Preemptions in which only the service's own threads ran: how many, how long in all, the longest, and how many ≥ 1 ms. */
  ownCount: number;
  ownMs: number;
  ownMaxMs: number;
  ownOver1Ms: number;
  /** Per class, the longest single run of one of its threads while the front thread waited, and how many such runs lasted ≥ 1 ms. */
  longestRunMs: Record<ThreadClass, number>;
  runsOver1Ms: Record<ThreadClass, number>;
}

export function perfAvailable(): boolean {
  try {
    execFileSync('perf', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export class SchedTrace {
  private readonly dir = mkdtempSync(join(tmpdir(), 'prsched-'));
  private readonly file = join(this.dir, 'sched.data');
  private readonly proc: ChildProcess;
  private readonly started: Promise<void>;

  constructor(cpu: string) {
    this.proc = spawn('perf', ['record', '-q', '-e', 'sched:sched_switch', '-C', cpu, '-o', this.file], { stdio: ['ignore', 'ignore', 'pipe'] });
    // perf needs a moment to set its events up before the run starts.
    this.started = new Promise((r) => setTimeout(r, 300));
  }

  ready(): Promise<void> {
    return this.started;
  }

  /** Stops recording and charges the front thread's preemptions; `classOf` names a thread id (undefined: another process). */
  async stop(frontTid: number, classOf: (tid: number) => ThreadClass | undefined): Promise<Preemptions> {
    const exited = new Promise((r) => this.proc.once('exit', r));
    this.proc.kill('SIGINT');
    await exited;
    const text = execFileSync('perf', ['script', '-i', this.file, '-F', 'time,trace'], { maxBuffer: 1 << 30, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    rmSync(this.dir, { recursive: true, force: true });
    return preemptions(text, frontTid, classOf);
  }
}

const LINE = /^\s*([\d.]+):\s+prev_comm=.* prev_pid=(\d+) prev_prio=\d+ prev_state=(\S+) ==> next_comm=.* next_pid=(\d+)/;

/** The analysis of `perf script -F time,trace` output of sched_switch events (exported for tests). */
export function preemptions(text: string, frontTid: number, classOf: (tid: number) => ThreadClass | undefined): Preemptions {
  const zero = (): Record<ThreadClass, number> => ({ pool: 0, render: 0, helper: 0, foreign: 0 });
  const p: Preemptions = { count: 0, totalMs: 0, byClass: zero(), ownCount: 0, ownMs: 0, ownMaxMs: 0, ownOver1Ms: 0, longestRunMs: zero(), runsOver1Ms: zero() };
  let out: { start: number; foreign: boolean; by: Map<ThreadClass, number> } | null = null;
  let runningSince = 0;
  for (const line of text.split('\n')) {
    const m = LINE.exec(line);
    if (m === null) continue;
    const t = Number(m[1]) * 1000;
    const prev = Number(m[2]);
    const next = Number(m[4]);
    if (out !== null && prev !== frontTid) {
      const c = classOf(prev) ?? 'foreign';
      const run = t - runningSince;
      out.by.set(c, (out.by.get(c) ?? 0) + run);
      if (c === 'foreign') out.foreign = true;
      p.longestRunMs[c] = Math.max(p.longestRunMs[c], run);
      if (run >= 1) p.runsOver1Ms[c]++;
    }
    if (prev === frontTid && m[3].startsWith('R')) out = { start: t, foreign: false, by: new Map() };
    if (next === frontTid && out !== null) {
      const ms = t - out.start;
      p.count++;
      p.totalMs += ms;
      for (const [c, v] of out.by) p.byClass[c] += v;
      if (!out.foreign) {
        p.ownCount++;
        p.ownMs += ms;
        p.ownMaxMs = Math.max(p.ownMaxMs, ms);
        if (ms >= 1) p.ownOver1Ms++;
      }
      out = null;
    }
    runningSince = t;
  }
  return p;
}
