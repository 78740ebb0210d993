/**
 * CPU time of each of a process's threads (Linux: /proc/<pid>/task/<tid>/sched, ns precision),
 * grouped by what the thread is in the service: the front thread (tid = pid), the evaluation
 * pool (nice raised by POOL_THREAD_NICE_INCREMENT, or by ROUTINE_THREAD_NICE_INCREMENT for the
 * cycle's threads), the metrics render thread (nice raised by
 * SERVICE_METRICS_RENDER_NICE) and the rest (V8's GC and compiler helpers, libuv's pool, LMDB).
 * Used to see which threads took a shared core while a benchmark ran.
 */
import { readdirSync, readFileSync } from 'node:fs';

export interface ThreadSample {
  tid: number;
  nice: number;
  cpuMs: number;
  /** Times the thread was preempted (it could have run on). */
  involuntary: number;
}

function field(text: string, name: string): number {
  const at = text.indexOf(name);
  if (at < 0) return NaN;
  return Number(text.slice(text.indexOf(':', at) + 1, text.indexOf('\n', at)));
}

export function threadSamples(pid: number): ThreadSample[] {
  const out: ThreadSample[] = [];
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const t of tids) {
    try {
      const sched = readFileSync(`/proc/${pid}/task/${t}/sched`, 'utf8');
      const stat = readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.push({ tid: Number(t), nice: Number(f[16]), cpuMs: field(sched, 'se.sum_exec_runtime'), involuntary: field(sched, 'nr_involuntary_switches') });
    } catch {
      // the thread ended meanwhile
    }
  }
  return out;
}

export interface ThreadGroups {
  front: number;
  pool: number;
  render: number;
  other: number;
  /** Preemptions of the front thread. */
  frontPreempted: number;
  /** The "other" threads that used ≥ 5 ms, as "<n>:<ms>" (n: the thread's place in creation order, 0 = front). */
  others: string;
}

/**
 * What a thread other than the front one is, by its nice value against the process's (`base`):
 * a pool thread (either set), the metrics render thread, or another (V8, libuv, LMDB).
 */
export function threadKind(nice: number, base: number, poolNices: readonly number[], renderNice: number): 'pool' | 'render' | 'other' {
  if (poolNices.some((n) => nice === Math.min(19, base + n))) return 'pool';
  return nice === Math.min(19, base + renderNice) ? 'render' : 'other';
}

/** CPU ms each group used between two samples (threads born meanwhile count from zero). */
export function threadGroupsBetween(pid: number, before: ThreadSample[], after: ThreadSample[], poolNices: readonly number[], renderNice: number): ThreadGroups {
  const was = new Map(before.map((s) => [s.tid, s]));
  const g: ThreadGroups = { front: 0, pool: 0, render: 0, other: 0, frontPreempted: 0, others: '' };
  const order = after.map((s) => s.tid).sort((a, b) => a - b);
  const others: string[] = [];
  const base = after.find((s) => s.tid === pid)?.nice ?? 0;
  for (const s of after) {
    const b = was.get(s.tid);
    const ms = s.cpuMs - (b?.cpuMs ?? 0);
    if (s.tid === pid) {
      g.front += ms;
      g.frontPreempted += s.involuntary - (b?.involuntary ?? 0);
      continue;
    }
    const kind = threadKind(s.nice, base, poolNices, renderNice);
    g[kind] += ms;
    if (kind === 'other' && ms >= 5) others.push(`${order.indexOf(s.tid)}:${Math.round(ms)}`);
  }
  g.others = others.join(' ');
  return g;
}
