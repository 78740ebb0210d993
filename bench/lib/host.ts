/**
 * What the benchmark's host is, as far as it decides the figures: the CPU, the kernel, and
 * whether an idle CPU polls before it halts (guest halt-polling, the `haltpoll` cpuidle driver).
 *
 * Why the last one: wrk is faster per request than the service, so against the service it
 * runs out of answers to read, sleeps, and is woken by the next answer. Where an idle vCPU
 * halts at once, each such wake-up is an inter-processor interrupt that the waking side (the
 * server) pays for in the kernel: about 5 µs of a route's 8-10 µs over bare uWS on such a host
 * (issue 20's forty-first pass), against well under 1 µs with halt-polling. The same build
 * meets the throughput targets on one kind of host and misses them on the other, so every
 * run's output and results file say which kind it ran on.
 */
import { readFileSync } from 'node:fs';
import { cpus, release } from 'node:os';

export interface HostDescription {
  /** /proc/cpuinfo's `model name`, or null. */
  cpuModel: string | null;
  /** `cpu family` and `model` (x86), or null. */
  cpuFamily: number | null;
  cpuModelNumber: number | null;
  cpus: number;
  kernel: string;
  /** The clock source (`tsc`, `kvm-clock`, …), or null. */
  clocksource: string | null;
  /** The cpuidle driver (`haltpoll`, `intel_idle`, `acpi_idle`, `none`), or null when unreadable. */
  cpuidleDriver: string | null;
  /** Whether an idle CPU polls before it halts (the haltpoll driver): null when unknown. */
  haltPolling: boolean | null;
}

function readOr(path: string): string | null {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return null;
  }
}

/** The first processor's `key: value` of /proc/cpuinfo text, or null. */
export function cpuinfoField(cpuinfo: string, key: string): string | null {
  for (const line of cpuinfo.split('\n')) {
    const at = line.indexOf(':');
    if (at > 0 && line.slice(0, at).trim() === key) return line.slice(at + 1).trim();
  }
  return null;
}

/** From the texts the kernel gives (null where a file could not be read). */
export function hostFrom(cpuinfo: string | null, clocksource: string | null, cpuidleDriver: string | null, kernel: string, cpuCount: number): HostDescription {
  const num = (v: string | null): number | null => (v !== null && /^\d+$/.test(v) ? Number(v) : null);
  const info = cpuinfo ?? '';
  return {
    cpuModel: cpuinfoField(info, 'model name'),
    cpuFamily: num(cpuinfoField(info, 'cpu family')),
    cpuModelNumber: num(cpuinfoField(info, 'model')),
    cpus: cpuCount,
    kernel,
    clocksource,
    cpuidleDriver,
    haltPolling: cpuidleDriver === null ? null : cpuidleDriver === 'haltpoll',
  };
}

export function describeHost(): HostDescription {
  return hostFrom(
    readOr('/proc/cpuinfo'),
    readOr('/sys/devices/system/clocksource/clocksource0/current_clocksource'),
    readOr('/sys/devices/system/cpu/cpuidle/current_driver'),
    release(),
    cpus().length,
  );
}

/** One line for the benchmark's output. */
export function hostLine(h: HostDescription): string {
  const cpu = [h.cpuModel ?? 'unknown CPU', h.cpuFamily !== null ? `family ${h.cpuFamily}` : null, h.cpuModelNumber !== null ? `model ${h.cpuModelNumber}` : null]
    .filter((x) => x !== null)
    .join(', ');
  const idle =
    h.haltPolling === true
      ? 'guest halt-polling (cpuidle haltpoll): waking an idle generator is cheap'
      : h.haltPolling === false
        ? `no halt-polling (cpuidle driver ${h.cpuidleDriver}): each wake-up of an idle generator costs the server an interrupt, so a server slower than wrk pays kernel time bare uWS does not`
        : 'cpuidle driver unknown';
  return `host: ${cpu}; ${h.cpus} CPUs; kernel ${h.kernel}; clock source ${h.clocksource ?? 'unknown'}; ${idle}`;
}
