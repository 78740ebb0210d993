/**
 * Inter-processor interrupts a CPU received, from /proc/interrupts: the HTTP benchmark's count
 * of how often the server had to wake the load generator's core.
 *
 * Why: on this project's virtual machines an idle vCPU halts, and a packet for a process
 * sleeping there is delivered by an IPI that the sender pays for (a VM exit, several µs in
 * the nested guests seen here). wrk sleeps whenever it has answered every response it has;
 * the slower the server, the more often it sleeps, so a slower server also pays for more
 * wake-ups of the generator: 0.08-0.09 per request against bare uWS, 0.37-0.57 against the
 * service, +3-4 µs of the service's kernel time per request (issue 20's twenty-fifth pass).
 * That cost belongs to the test set-up (a client on the same machine), not to the service in
 * production, where the client is across a network: the benchmark shows it beside every run
 * instead of leaving it hidden in the server's CPU.
 *
 * Counted: CAL (function-call IPIs, which a remote wake-up of an idle CPU uses) and RES
 * (rescheduling IPIs, used when that CPU is running something else). Linux only; null
 * elsewhere, or when `cpus` is not one CPU number.
 */
import { readFileSync } from 'node:fs';

const WAKE_UP_ROWS = new Set(['CAL:', 'RES:']);

/** The wake-up IPIs CPU `cpu` has received since boot, from the text of /proc/interrupts; null if the rows are missing. */
export function wakeUpsFromProcInterrupts(text: string, cpu: number): number | null {
  const lines = text.split('\n');
  const header = lines[0]?.trim().split(/\s+/) ?? [];
  const column = header.indexOf(`CPU${cpu}`);
  if (column < 0) return null;
  let sum = 0;
  let rows = 0;
  for (const line of lines) {
    const cells = line.trim().split(/\s+/);
    if (!WAKE_UP_ROWS.has(cells[0])) continue;
    const v = Number(cells[1 + column]);
    if (!Number.isFinite(v)) return null;
    sum += v;
    rows++;
  }
  return rows === WAKE_UP_ROWS.size ? sum : null;
}

/** The wake-up IPIs the CPU `cpus` names has received so far; null where unknown (see above). */
export function wakeUps(cpus: string | undefined): number | null {
  if (cpus === undefined || !/^\d+$/.test(cpus)) return null;
  try {
    return wakeUpsFromProcInterrupts(readFileSync('/proc/interrupts', 'utf8'), Number(cpus));
  } catch {
    return null;
  }
}
