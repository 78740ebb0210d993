/**
 * CPU accounting from /proc for the HTTP benchmark: a process's CPU time (all its threads),
 * and the CPU every other process on the machine used meanwhile — the benchmark's test of
 * whether a run was disturbed. Linux only; elsewhere every reading is null.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';

const TICK_S = 0.01; // USER_HZ is 100 on every Linux the service targets

/** The fields of /proc/<pid>/stat after comm (f[0] is field 3, state); null if the process is gone. */
function statFields(pid: number): string[] | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // Field 2 (comm) may hold spaces: split after its closing parenthesis.
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** The process's state letter (field 3: R running, S sleeping, T stopped…); null if it is gone. */
export function processState(pid: number): string | null {
  return statFields(pid)?.[0] ?? null;
}

/** utime + stime (+ cutime + cstime when `withChildren`) of one process, in seconds; null if gone. */
export function processCpuS(pid: number, withChildren = false): number | null {
  const f = statFields(pid);
  if (f === null) return null;
  // utime is field 14 → f[11], stime f[12], cutime f[13], cstime f[14].
  let ticks = Number(f[11]) + Number(f[12]);
  if (withChildren) ticks += Number(f[13]) + Number(f[14]);
  return ticks * TICK_S;
}

/** The kernel's part of processCpuS (stime alone), in seconds; null if gone. */
export function processKernelCpuS(pid: number): number | null {
  const f = statFields(pid);
  return f === null ? null : Number(f[12]) * TICK_S;
}

/** CPU seconds of every process, by pid (children they have reaped included). */
export function allProcessesCpu(): Map<number, number> {
  const out = new Map<number, number>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return out;
  }
  for (const e of entries) {
    const pid = Number(e);
    if (!Number.isInteger(pid)) continue;
    const s = processCpuS(pid, true);
    if (s !== null) out.set(pid, s);
  }
  return out;
}

/** CPU seconds other processes (not in `exclude`) used between two snapshots. */
export function othersCpuS(before: Map<number, number>, after: Map<number, number>, exclude: ReadonlySet<number>): number {
  let sum = 0;
  for (const [pid, s] of after) {
    if (exclude.has(pid)) continue;
    sum += s - (before.get(pid) ?? 0); // a process born during the run counts from zero
  }
  // A process that ended during the run reappears whole in its parent's reaped-children
  // time: only what it used after the first snapshot counts.
  for (const [pid, s] of before) if (!after.has(pid) && !exclude.has(pid)) sum -= s;
  return Math.max(0, sum);
}

/**
 * CPU seconds the hypervisor gave to other guests while this machine wanted to run (the
 * "steal" column of /proc/stat, all CPUs), since boot; null where unknown. Other processes in
 * /proc do not show it, yet it slows the server and the ceiling alike.
 */
export function stealS(): number | null {
  try {
    return stealFromProcStat(readFileSync('/proc/stat', 'utf8'));
  } catch {
    return null;
  }
}

/** The steal seconds of /proc/stat's first line (all CPUs): `cpu user nice system idle iowait irq softirq steal ...`; null if absent. */
export function stealFromProcStat(text: string): number | null {
  const cpu = text.split('\n', 1)[0].trim().split(/\s+/);
  if (cpu[0] !== 'cpu' || cpu.length < 9) return null;
  const steal = Number(cpu[8]);
  return Number.isFinite(steal) ? steal * TICK_S : null;
}

export function loadAverage1m(): number {
  return loadavg()[0];
}
