/** The benchmark's description of its host (bench/lib/host.ts): what decides whether waking the generator is dear. */
import { release } from 'node:os';
import { describe, expect, it } from 'vitest';
import { cpuinfoField, describeHost, hostFrom, hostLine } from '../../bench/lib/host.js';

const CPUINFO = [
  'processor\t: 0',
  'vendor_id\t: AuthenticAMD',
  'cpu family\t: 25',
  'model\t\t: 1',
  'model name\t: AMD EPYC',
  '',
  'processor\t: 1',
  'vendor_id\t: AuthenticAMD',
  'cpu family\t: 25',
  'model\t\t: 1',
  'model name\t: AMD EPYC',
  '',
].join('\n');

describe('host description', () => {
  it('reads the first processor\'s fields, not a key that merely starts the same', () => {
    expect(cpuinfoField(CPUINFO, 'model')).toBe('1');
    expect(cpuinfoField(CPUINFO, 'model name')).toBe('AMD EPYC');
    expect(cpuinfoField(CPUINFO, 'flags')).toBeNull();
  });

  it('says a host without the haltpoll driver does not poll, and what that costs a server slower than wrk', () => {
    const h = hostFrom(CPUINFO, 'tsc', 'none', '6.18.44', 2);
    expect(h).toEqual({ cpuModel: 'AMD EPYC', cpuFamily: 25, cpuModelNumber: 1, cpus: 2, kernel: '6.18.44', clocksource: 'tsc', cpuidleDriver: 'none', haltPolling: false });
    expect(hostLine(h)).toBe(
      'host: AMD EPYC, family 25, model 1; 2 CPUs; kernel 6.18.44; clock source tsc; no halt-polling (cpuidle driver none): each wake-up of an idle generator costs the server an interrupt, so a server slower than wrk pays kernel time bare uWS does not',
    );
  });

  it('says halt-polling where the driver is haltpoll, and unknown where nothing could be read', () => {
    expect(hostFrom(CPUINFO, 'tsc', 'haltpoll', 'k', 2).haltPolling).toBe(true);
    expect(hostLine(hostFrom(CPUINFO, 'tsc', 'haltpoll', 'k', 2))).toContain('guest halt-polling (cpuidle haltpoll)');
    const none = hostFrom(null, null, null, 'k', 0);
    expect(none).toMatchObject({ cpuModel: null, cpuFamily: null, cpus: 0, haltPolling: null });
    expect(hostLine(none)).toBe('host: unknown CPU; 0 CPUs; kernel k; clock source unknown; cpuidle driver unknown');
  });

  it('describes this machine from /proc and /sys (Linux: the CPU, its idle driver, its clock)', () => {
    const h = describeHost();
    expect(h.kernel).toBe(release());
    expect(h.cpus).toBeGreaterThan(0);
    expect(h.cpuModel).not.toBeNull();
    expect(h.clocksource).not.toBeNull();
    expect(h.haltPolling).toBe(h.cpuidleDriver === null ? null : h.cpuidleDriver === 'haltpoll');
  });
});
