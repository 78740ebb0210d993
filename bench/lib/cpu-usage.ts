/**
 * CPU accounting from /proc for the HTTP benchmark: a process's CPU time (all its threads),
 * and the CPU every other process on the machine used meanwhile — the benchmark's test of
 * whether a run was disturbed. Linux only; elsewhere every reading is null.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';

const TICK_S = 0.01; // USER_HZ is 100 on every Linux the service targets

/** /proc/<pid>/stat: the command name (field 2) and the fields after it (fields[0] is field 3, state); null if the process is gone. */
function procStat(pid: number): { name: string; fields: string[] } | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // Field 2 (comm) may hold spaces: split after its closing parenthesis.
  const close = stat.lastIndexOf(')');
  return { name: stat.slice(stat.indexOf('(') + 1, close), fields: stat.slice(close + 2).split(' ') };
}

function statFields(pid: number): string[] | null {
  return procStat(pid)?.fields ?? null;
}

/** utime + stime (+ cutime + cstime when `withChildren`) from stat's fields, in seconds. */
function cpuOfFields(f: readonly string[], withChildren: boolean): number {
  // utime is field 14 → f[11], stime f[12], cutime f[13], cstime f[14].
  let ticks = Number(f[11]) + Number(f[12]);
  if (withChildren) ticks += Number(f[13]) + Number(f[14]);
  return ticks * TICK_S;
}

/** The process's state letter (field 3: R running, S sleeping, T stopped…); null if it is gone. */
export function processState(pid: number): string | null {
  return statFields(pid)?.[0] ?? null;
}

/** utime + stime (+ cutime + cstime when `withChildren`) of one process, in seconds; null if gone. */
export function processCpuS(pid: number, withChildren = false): number | null {
  const f = statFields(pid);
  return f === null ? null : cpuOfFields(f, withChildren);
}

/** The kernel's part of processCpuS (stime alone), in seconds; null if gone. */
export function processKernelCpuS(pid: number): number | null {
  const f = statFields(pid);
  return f === null ? null : Number(f[12]) * TICK_S;
}

/** One process in a snapshot of the machine's processes. */
export interface ProcessCpu {
  /** utime + stime + the reaped children's, seconds. */
  cpuS: number;
  ppid: number;
  /** The command name (stat's comm, as `ps` shows it). */
  name: string;
}

/** Every process's CPU seconds (children they have reaped included), parent and name, by pid. */
export function allProcessesCpu(): Map<number, ProcessCpu> {
  const out = new Map<number, ProcessCpu>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return out;
  }
  for (const e of entries) {
    const pid = Number(e);
    if (!Number.isInteger(pid)) continue;
    const st = procStat(pid);
    if (st !== null) out.set(pid, { cpuS: cpuOfFields(st.fields, true), ppid: Number(st.fields[1]), name: st.name }); // ppid: field 4
  }
  return out;
}

/** CPU seconds one other process used between two snapshots. */
export interface OtherProcessCpu {
  pid: number;
  name: string;
  cpuS: number;
}

/**
 * What every process not in `exclude` used between two snapshots, by process. A process born
 * during the run counts from zero; one that ended during it reappears whole in its parent's
 * reaped-children time, so what it had used before the first snapshot is taken off its
 * nearest ancestor still running (or off the total alone, when none of its ancestors is).
 */
export function othersByProcess(before: ReadonlyMap<number, ProcessCpu>, after: ReadonlyMap<number, ProcessCpu>, exclude: ReadonlySet<number>): OtherProcessCpu[] {
  const byPid = new Map<number, OtherProcessCpu>();
  for (const [pid, p] of after) {
    if (!exclude.has(pid)) byPid.set(pid, { pid, name: p.name, cpuS: p.cpuS - (before.get(pid)?.cpuS ?? 0) });
  }
  for (const [pid, p] of before) {
    if (after.has(pid) || exclude.has(pid)) continue;
    const reaper = survivingAncestor(p.ppid, before, byPid);
    if (reaper !== undefined) reaper.cpuS -= p.cpuS;
    else byPid.set(pid, { pid, name: p.name, cpuS: -p.cpuS });
  }
  return [...byPid.values()];
}

/**
 * The nearest ancestor of an ended process still there at the second snapshot: its time went
 * up through every ended parent's reaped-children time to that one (a hook that ended within
 * a `git` that ended within a shell shows on the shell).
 */
function survivingAncestor(ppid: number, before: ReadonlyMap<number, ProcessCpu>, alive: ReadonlyMap<number, OtherProcessCpu>): OtherProcessCpu | undefined {
  for (let up = ppid, hops = 0; up > 0 && hops < 64; hops++) {
    const found = alive.get(up);
    if (found !== undefined) return found;
    up = before.get(up)?.ppid ?? 0;
  }
  return undefined;
}

/** The CPU seconds other processes used in all (othersByProcess's list; at least 0). */
export function othersCpuS(others: readonly OtherProcessCpu[]): number {
  return Math.max(0, others.reduce((a, o) => a + o.cpuS, 0));
}

/**
 * The other processes that used the most CPU, by name (a name's processes together), as
 * "name ms, name ms": at most `n` of them, each at least `minMs`; '' when none did.
 */
export function mostOthers(others: readonly OtherProcessCpu[], n = 3, minMs = 5): string {
  const byName = new Map<string, number>();
  for (const o of others) byName.set(o.name, (byName.get(o.name) ?? 0) + o.cpuS);
  return [...byName]
    .filter(([, s]) => s * 1000 >= minMs)
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([name, s]) => `${name} ${Math.round(s * 1000)} ms`)
    .join(', ');
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
