/**
 * keepScavengesOnOneCpu (src/gc-helpers.ts): in a child process pinned to one CPU, young
 * garbage with ArrayBuffers in it (as uWS's request bodies are) must be collected without
 * V8's helper threads running, for they could only run by taking the CPU from the front
 * thread. The control run without the setting shows the workload wakes them (measured here:
 * 2 context switches of the other threads with it, ~1,000 without), and with two CPUs the
 * defaults stay.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { gcFlagsFor, ONE_CPU_GC_FLAGS } from '../../src/gc-helpers.js';

const MODULE = fileURLToPath(new URL('../../dist/src/gc-helpers.js', import.meta.url));

/** Context switches of the process's other threads over the workload, and the flags it set. */
function helperSwitches(setting: boolean, cpus: string): { set: string[]; switches: number } {
  const script = `
    import { readdirSync, readFileSync } from 'node:fs';
    import { keepScavengesOnOneCpu } from ${JSON.stringify(MODULE)};
    const set = ${setting} ? keepScavengesOnOneCpu() : [];
    const others = () => {
      let n = 0;
      for (const t of readdirSync('/proc/self/task')) {
        if (Number(t) === process.pid) continue;
        const st = readFileSync('/proc/self/task/' + t + '/status', 'utf8');
        n += Number(/\\nvoluntary_ctxt_switches:\\s+(\\d+)/.exec(st)[1]) + Number(/nonvoluntary_ctxt_switches:\\s+(\\d+)/.exec(st)[1]);
      }
      return n;
    };
    let keep = 0;
    const work = (k) => { for (let i = 0; i < k; i++) keep ^= new Uint8Array(new ArrayBuffer(64))[0] ^ i; };
    work(300_000); // JIT and the first collections
    const before = others();
    work(3_000_000);
    console.log(JSON.stringify({ set, switches: others() - before, keep }));`;
  const out = execFileSync('taskset', ['-c', cpus, process.execPath, '--input-type=module', '-e', script], { encoding: 'utf8' });
  return JSON.parse(out.trim()) as { set: string[]; switches: number };
}

describe('gcFlagsFor', () => {
  it('turns the helpers off for one CPU only', () => {
    expect(gcFlagsFor(1)).toEqual(ONE_CPU_GC_FLAGS);
    expect(gcFlagsFor(2)).toEqual([]);
    expect(gcFlagsFor(64)).toEqual([]);
  });
});

// taskset is util-linux's, on every Debian system: without it these runs fail (ENOENT), they do not skip.
describe('keepScavengesOnOneCpu', () => {
  it('on one CPU, collects young garbage without waking the helper threads; the control run wakes them', () => {
    const on = helperSwitches(true, '0');
    const off = helperSwitches(false, '0');
    expect(on.set).toEqual(ONE_CPU_GC_FLAGS);
    expect(on.switches).toBeLessThan(50);
    expect(off.switches).toBeGreaterThan(200);
  }, 60_000);

  it('with two CPUs, sets nothing', () => {
    expect(helperSwitches(true, '0,1').set).toEqual([]);
  }, 60_000);
});
