/** The HTTP benchmark's own arithmetic: which rounds give a ratio, and whose CPU counts as "others". */
import { describe, expect, it } from 'vitest';
import { mostOthers, othersByProcess, othersCpuS, stealFromProcStat, type ProcessCpu } from '../../bench/lib/cpu-usage.js';
import { GC_FUNCTION } from '../../bench/lib/http-instructions.js';
import { table } from '../../bench/lib/load.js';
import { wakeUpsFromProcInterrupts } from '../../bench/lib/interrupts.js';
import { loopShare, sameRunRatios, sizeRatios, SLOW_CEILING_FACTOR, slowdownBeside } from '../../bench/lib/same-run.js';

const run = (rps: number, p99Ms: number, disturbed = false, serverUsPerReq = 10, generatorCore = 0.8, p50Ms = p99Ms / 2) => ({ rps, p50Ms, p99Ms, disturbed, serverUsPerReq, generatorCore });

describe('size ratios', () => {
  it('divides each round\'s route throughput by the smallest rule set\'s, measured beside it; a disturbed run gets no ratio', () => {
    const f = (rps: number, disturbed = false) => run(rps, 1, disturbed);
    expect(sizeRatios([{ route: f(90), reference: f(100) }, { route: f(45), reference: f(50) }, { route: f(10, true), reference: f(100) }, { route: f(10), reference: f(100, true) }])).toEqual([0.9, 0.9]);
  });
});

describe('same-run ratios', () => {
  it('divides each round by its own ceiling', () => {
    const r = sameRunRatios([
      { ceiling: run(100, 2), route: run(70, 3), outcome: run(80, 2) },
      { ceiling: run(50, 4), route: run(40, 4), outcome: run(45, 4) },
    ], 64);
    expect(r.route).toEqual([0.7, 0.8]);
    expect(r.outcome).toEqual([0.8, 0.9]);
    expect(r.p99).toEqual([1.5, 1]);
    expect(r.refused).toBe(0);
  });

  it('gives the ratio by server CPU per request too, and counts the rounds whose generator neared its core', () => {
    const r = sameRunRatios([
      { ceiling: run(160, 1, false, 6, 0.98), route: run(130, 2, false, 7.5), outcome: run(135, 2) },
      { ceiling: run(150, 1, false, 6, 0.9), route: run(120, 2, false, 8), outcome: run(130, 2) },
      { ceiling: run(150, 1, true, 6, 0.99), route: run(120, 2, false, 8), outcome: run(130, 2) }, // refused: not counted either way
    ], 64);
    expect(r.routeByCpu).toEqual([0.8, 0.75]);
    expect(r.generatorBound).toBe(1);
    expect(r.refused).toBe(1);
  });

  it('tells a route p99 that is its median\'s from one with a tail of its own', () => {
    const r = sameRunRatios([
      // The route's p50 twice bare's, each p99 three times its p50: the p99 ratio is the median's.
      { ceiling: run(100, 0.9, false, 10, 0.99, 0.3), route: run(80, 1.8, false, 12.5, 0.95, 0.6), outcome: run(80, 2) },
      // The same p50s, but the route's p99 five times its p50: a tail of its own.
      { ceiling: run(100, 0.9, false, 10, 0.99, 0.3), route: run(80, 3, false, 12.5, 0.95, 0.6), outcome: run(80, 2) },
    ], 64);
    expect(r.p50).toEqual([2, 2]);
    expect(r.ceilingTail.map((v) => +v.toFixed(9))).toEqual([3, 3]);
    expect(r.routeTail.map((v) => +v.toFixed(9))).toEqual([3, 5]);
  });

  it('says how much of each connection\'s loop a run\'s p50 covers: a ceiling at wrk\'s pace leaves part of it inside wrk', () => {
    // 64 connections: bare at 80,000 req/s turns each connection every 0.8 ms, and its p50 of
    // 0.44 ms covers 0.55 of that; the route at 60,000 req/s turns every ~1.067 ms, and its p50
    // of 0.98 ms covers ~0.92 of it.
    expect(loopShare({ p50Ms: 0.44, rps: 80_000 }, 64)).toBeCloseTo(0.55, 9);
    expect(loopShare({ p50Ms: 0.98, rps: 60_000 }, 64)).toBeCloseTo(0.91875, 9);
    const rounds = [{ ceiling: run(80_000, 1.5, false, 12.5, 0.99, 0.44), route: run(60_000, 2.9, false, 16, 0.95, 0.98), outcome: run(60_000, 2.8) }];
    const r = sameRunRatios(rounds, 64);
    expect(r.ceilingLoopShare[0]).toBeCloseTo(0.55, 9);
    expect(r.routeLoopShare[0]).toBeCloseTo(0.91875, 9);
    // With half the connections each turn is half as long: the same p50 covers twice as much of it.
    expect(sameRunRatios(rounds, 32).ceilingLoopShare[0]).toBeCloseTo(1.1, 9);
    // A refused round gives no share either.
    expect(sameRunRatios([{ ...rounds[0], ceiling: { ...rounds[0].ceiling, disturbed: true } }], 64).ceilingLoopShare).toEqual([]);
  });

  it('says how much slower the machine was around a scrape + cycle run than around the quiet runs', () => {
    // Bare uWS at 11-13 µs an answer beside the quiet runs (median 12): a run bracketed by 12
    // and 13.2 µs ran on a machine 1.1× slower, one bracketed by 12 and 18 (a slow phase that
    // began during the run) on one 1.5× slower: the slower neighbour counts.
    const quiet = [11, 12, 13, 12];
    expect(slowdownBeside([12, 13.2], quiet)).toBeCloseTo(1.1, 9);
    expect(slowdownBeside([18, 12], quiet)).toBeCloseTo(1.5, 9);
    expect(slowdownBeside([12, 13.2], quiet)).toBeLessThanOrEqual(SLOW_CEILING_FACTOR);
    expect(slowdownBeside([18, 12], quiet)).toBeGreaterThan(SLOW_CEILING_FACTOR);
    // A faster machine is no reason to refuse.
    expect(slowdownBeside([9, 10], quiet)).toBeLessThan(1);
    // No reading (a slice that answered nothing reads 0 or NaN) on either side: no figure.
    expect(slowdownBeside([], quiet)).toBeNaN();
    expect(slowdownBeside([12], [])).toBeNaN();
    expect(slowdownBeside([0, 12], [0, 12])).toBeCloseTo(1, 9);
  });

  it('refuses a round whose ceiling run was disturbed', () => {
    const r = sameRunRatios([
      { ceiling: run(100, 2, true), route: run(90, 3), outcome: run(90, 2) },
      { ceiling: run(100, 2), route: run(60, 3, true), outcome: run(65, 2) },
    ], 64);
    expect(r.route).toEqual([0.6]);
    expect(r.refused).toBe(1);
  });

  it('refuses a round whose ceiling took more than 1.25x the median ceiling\'s CPU per request: the machine slowed', () => {
    const r = sameRunRatios([
      { ceiling: run(100, 2, false, 10), route: run(70, 3, false, 14), outcome: run(70, 2) },
      { ceiling: run(50, 2, false, 19.2), route: run(30, 3, false, 33), outcome: run(30, 2) }, // 1.92x: slowed
      { ceiling: run(95, 2, false, 12.4), route: run(66, 3, false, 15), outcome: run(66, 2) }, // 1.24x: counted
      { ceiling: run(100, 2, true, 9), route: run(70, 3), outcome: run(70, 2) }, // disturbed: not the fastest either
    ], 64);
    expect(r.route).toEqual([0.7, 66 / 95]);
    expect(r.refused).toBe(2);
    expect(r.slowed).toBe(1);
  });

  it('does not refuse the usual rounds because one round ran on a host that had sped up', () => {
    const r = sameRunRatios([
      { ceiling: run(89, 2, false, 11.2), route: run(64, 3, false, 15.5), outcome: run(65, 2) },
      { ceiling: run(88, 2, false, 11.3), route: run(65, 3, false, 15.3), outcome: run(62, 2) },
      { ceiling: run(90, 2, false, 11.1), route: run(77, 3, false, 12.8), outcome: run(75, 2) },
      { ceiling: run(101, 2, false, 9.8), route: run(73, 3, false, 13.7), outcome: run(80, 2) },
      { ceiling: run(128, 2, false, 7.5), route: run(99, 3, false, 10.1), outcome: run(95, 2) }, // fast: 0.67x the median
    ], 64);
    expect(r.refused).toBe(0);
    expect(r.route).toHaveLength(5);
  });
});

describe('other processes\' CPU', () => {
  const proc = (cpuS: number, ppid = 0, name = 'p'): ProcessCpu => ({ cpuS, ppid, name });
  const before = new Map([
    [1, proc(10, 0, 'node')], // excluded (the server)
    [2, proc(5, 0, 'beam.smp')], // grows by 1
    [3, proc(4, 4, 'sh')], // ends during the run; its parent 4 reaps it
    [4, proc(1, 0, 'cron')],
    [6, proc(2, 9, 'orphan')], // ends during the run; its parent is gone too
  ]);
  const after = new Map([
    [1, proc(30, 0, 'node')],
    [2, proc(6, 0, 'beam.smp')],
    [4, proc(1 + 4.5, 0, 'cron')], // reaped child: its whole 4.5 s lands in the parent's cutime
    [5, proc(0.25, 2, 'beam.smp')], // born during the run
  ]);

  it('counts growth, newcomers, and only the run-time part of processes that ended', () => {
    // 1 (pid 2) + 4.5 - 4 (pid 3 ran 0.5 s during the run) + 0.25 (pid 5) - 2 (pid 6's time before the run) = -0.25 → 0
    expect(othersCpuS(othersByProcess(before, after, new Set([1])))).toBe(0);
    const withoutOrphan = new Map([...before].filter(([pid]) => pid !== 6));
    expect(othersCpuS(othersByProcess(withoutOrphan, after, new Set([1])))).toBeCloseTo(1.75, 9);
  });

  it('names each process with what it used, a reaped child\'s run-time part on its parent', () => {
    const others = othersByProcess(before, after, new Set([1]));
    const byPid = Object.fromEntries(others.map((o) => [o.pid, [o.name, Number(o.cpuS.toFixed(6))]]));
    expect(byPid).toEqual({ 2: ['beam.smp', 1], 4: ['cron', 0.5], 5: ['beam.smp', 0.25], 6: ['orphan', -2] });
  });

  it('takes an ended grandchild\'s time before the run off its nearest ancestor still running', () => {
    // A shell (10) ran git (11), which ran a hook (12): both ended during the run, the hook
    // reaped by git and git by the shell, so the shell's reaped time holds all of both.
    const b = new Map([
      [10, proc(1, 0, 'bash')],
      [11, proc(0.2, 10, 'git')],
      [12, proc(1.5, 11, 'node')],
    ]);
    const a = new Map([[10, proc(1 + 0.2 + 1.5 + 0.1, 0, 'bash')]]); // 0.1 s of the two in the run
    expect(othersByProcess(b, a, new Set())).toEqual([{ pid: 10, name: 'bash', cpuS: expect.closeTo(0.1, 9) }]);
    expect(othersCpuS(othersByProcess(b, a, new Set()))).toBeCloseTo(0.1, 9);
  });

  it('sums the most CPU by name, largest first, within a count and a floor', () => {
    const others = othersByProcess(before, after, new Set([1]));
    expect(mostOthers(others)).toBe('beam.smp 1250 ms, cron 500 ms');
    expect(mostOthers(others, 1)).toBe('beam.smp 1250 ms');
    expect(mostOthers(others, 3, 600)).toBe('beam.smp 1250 ms');
    expect(mostOthers([])).toBe('');
  });
});

describe("the hypervisor's steal time", () => {
  it('reads the eighth value of the all-CPU line, in seconds', () => {
    expect(stealFromProcStat('cpu  270334 1967 268383 312921 1077 0 134296 2146 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n')).toBeCloseTo(21.46, 6);
  });

  it('is null for a kernel without the column or another first line', () => {
    expect(stealFromProcStat('cpu  1 2 3 4 5 6 7\n')).toBeNull();
    expect(stealFromProcStat('intr 1 2 3 4 5 6 7 8 9\n')).toBeNull();
  });
});

describe("wake-ups of the generator's core", () => {
  // As this project's VMs print it: the column of each CPU, rows of device and IPI counts.
  const text = [
    '           CPU0       CPU1       ',
    '  0:         52          0   IO-APIC   2-edge      timer',
    'LOC:     250236     470149   Local timer interrupts',
    'RES:      39231      40507   Rescheduling interrupts',
    'CAL:    6873543     272667   Function call interrupts',
    'TLB:       3340       3442   TLB shootdowns',
    '',
  ].join('\n');

  it("sums the CPU's function-call and rescheduling IPIs, nothing else", () => {
    expect(wakeUpsFromProcInterrupts(text, 0)).toBe(39231 + 6873543);
    expect(wakeUpsFromProcInterrupts(text, 1)).toBe(40507 + 272667);
  });

  it('is null for a CPU the table does not have, or without both rows', () => {
    expect(wakeUpsFromProcInterrupts(text, 2)).toBeNull();
    expect(wakeUpsFromProcInterrupts(text.replace(/RES:.*\n/, ''), 0)).toBeNull();
  });
});

describe('bench:instructions --part http: the collector\'s part', () => {
  it('counts V8\'s collector functions as GC, and neither the allocator nor the service\'s code', () => {
    for (const name of [
      'heap::base::SlotCallbackResult v8::internal::Scavenger::ScavengeObject<v8::internal::FullHeapObjectSlot>',
      'v8::internal::ScavengerCollector::CollectGarbage',
      'v8::internal::Heap::Scavenge',
      'v8::internal::ArrayBufferSweeper::Sweep',
      'v8::internal::SemiSpace::Swap',
    ])
      expect(GC_FUNCTION.test(name), name).toBe(true);
    for (const name of ['JS:*decodePlainBody src/http/plain-body.js:100:32', 'v8::internal::Factory::AllocateRaw', 'v8::Function::Call', 'Builtins_RecordWriteSaveFP [node]'])
      expect(GC_FUNCTION.test(name), name).toBe(false);
  });
});

describe('the benchmarks\' terminal tables', () => {
  it('show a column that only later rows have, empty where a row lacks it', () => {
    const text = table([
      { phase: 'quiet', 'p99 ms': 1.9 },
      { phase: 'scrape + cycle', 'p99 ms': 3.04, 'p99 / quiet median': 1.6 },
    ]);
    const [head, , quiet, scrape] = text.split('\n');
    expect(head).toContain('p99 / quiet median');
    expect(scrape).toContain('1.60');
    expect(quiet).not.toContain('undefined');
    expect(quiet.split('|').length).toBe(head.split('|').length);
  });
});
