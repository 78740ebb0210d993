/** Issue 20's targets judged from one benchmark run's figures (bench/lib/targets.ts). */
import { describe, expect, it } from 'vitest';
import { judgeTargets, setupCaveats, type CycleFigure, type MemoryFigure, type SizeFigures } from '../../bench/lib/targets.js';

/** Figures in the shape `npm run bench` writes them (its summary, cycle and memory rows). */
const SIZES: SizeFigures[] = [
  { rules: 10, 'route / bare': 0.821, 'outcome / bare': 0.836, 'route p99 / bare p99': 1.982, sizeRatio: '' },
  { rules: 1000, 'route / bare': 0.825, 'outcome / bare': 0.839, 'route p99 / bare p99': 1.804, sizeRatio: 1.013 },
  { rules: 100000, 'route / bare': 0.827, 'outcome / bare': 0.813, 'route p99 / bare p99': 1.459, sizeRatio: 1.023 },
];
const CYCLE: CycleFigure[] = [
  { phase: 'quiet (no outcomes, no scrape)' },
  { phase: 'quiet (no outcomes, no scrape)' },
  { phase: 'scrape every 1 s (5) + 5 s evaluation cycle (cold: the first run)', 'p99 / quiet median': 1.49 },
  { phase: 'scrape every 1 s (6) + 5 s evaluation cycle', 'p99 / quiet median': 1.34 },
  { phase: 'scrape every 1 s (6) + 5 s evaluation cycle', 'p99 / quiet median': 2.01 },
];
const MEMORY: MemoryFigure[] = [
  { rules: 10, 'rss after load MB': 109 },
  { rules: 1000, 'rss after load MB': 134 },
  { rules: 100000, 'rss after load MB': 207 },
];

/** judgeTargets' rows, in its order. */
const [ROUTE, OUTCOME, P99, SIZE, RSS, SCRAPE] = [0, 1, 2, 3, 4, 5];
const verdicts = (sizes = SIZES, cycle = CYCLE, memory = MEMORY) => judgeTargets(sizes, cycle, memory);

describe('judgeTargets', () => {
  it('judges each target from its own figures and bound', () => {
    const all = judgeTargets(SIZES, CYCLE, MEMORY);
    expect(all.map((t) => [t.target, t.verdict])).toEqual([
      ['route ≥ 0.7 of bare uWS req/s', 'met'],
      ['outcome ≥ 0.7 of bare uWS req/s', 'met'],
      ['route p99 ≤ 1.5× bare uWS\'s', 'missed'],
      ['route req/s at 100,000 rules within 10% of 10', 'met'],
      ['service RSS ≤ 300 MB at 100,000 rules after the full-speed runs', 'met'],
      ['route p99 with a scrape and evaluation cycles ≤ 2× its quiet value', 'missed'],
    ]);
    expect(all[2].figures).toBe('10 rules: 1.982, 1,000 rules: 1.804, 100,000 rules: 1.459');
    expect(all[5].figures).toBe('cold: 1.49, warm 1: 1.34, warm 2: 2.01');
  });

  it('counts a figure on the bound as met and one past it as missed', () => {
    const at = SIZES.map((s) => ({ ...s, 'route / bare': 0.7, 'route p99 / bare p99': 1.5 }));
    expect(verdicts(at)[ROUTE].verdict).toBe('met');
    expect(verdicts(at)[P99].verdict).toBe('met');
    const under = SIZES.map((s, i) => ({ ...s, 'route / bare': i === 1 ? 0.699 : 0.8 }));
    expect(verdicts(under)[ROUTE].verdict).toBe('missed');
    expect(verdicts(SIZES.map((s) => ({ ...s, sizeRatio: s.rules === 100000 ? 0.899 : s.sizeRatio })))[SIZE].verdict).toBe('missed');
    expect(verdicts(SIZES.map((s) => ({ ...s, sizeRatio: s.rules === 100000 ? 1.1 : s.sizeRatio })))[SIZE].verdict).toBe('met');
    expect(verdicts(SIZES, CYCLE, MEMORY.map((m) => ({ ...m, 'rss after load MB': 301 })))[RSS].verdict).toBe('missed');
  });

  it('does not judge a target whose figure was refused or not measured, unless another of its figures missed', () => {
    const refused = SIZES.map((s, i) => ({ ...s, 'outcome / bare': i === 0 ? 'refused: every ceiling run disturbed' : 0.8 }));
    const outcome = verdicts(refused)[OUTCOME];
    expect(outcome.verdict).toBe('not judged');
    expect(outcome.figures).toContain('10 rules: refused: every ceiling run disturbed');
    const refusedAndMissed = SIZES.map((s, i) => ({ ...s, 'outcome / bare': i === 0 ? 'refused: every ceiling run disturbed' : 0.6 }));
    expect(verdicts(refusedAndMissed)[OUTCOME].verdict).toBe('missed');

    const small = SIZES.slice(0, 2);
    expect(verdicts(small, [], MEMORY.slice(0, 2))[SIZE]).toMatchObject({ verdict: 'not judged', figures: 'not measured in this run' });
    expect(verdicts(small, [], MEMORY.slice(0, 2))[RSS].verdict).toBe('not judged');
    expect(verdicts(small, [], [])[SCRAPE]).toMatchObject({ verdict: 'not judged', figures: 'not measured in this run' });
    expect(verdicts(small, [], [])[P99].verdict).toBe('missed'); // its two sizes' figures still judge it
  });
});

describe('setupCaveats', () => {
  it('says nothing of the issue\'s own set-up, and names each way a run departs from it', () => {
    expect(setupCaveats({ keysMode: true, rounds: 5, connections: 64 })).toEqual([]);
    expect(setupCaveats({ keysMode: true, rounds: 7, connections: 64 })).toEqual([]);
    const all = setupCaveats({ keysMode: false, rounds: 3, connections: 32 });
    expect(all).toHaveLength(3);
    expect(all[0]).toContain('--no-keys');
    expect(all[1]).toContain('3 round(s)');
    expect(all[2]).toContain('32 connections');
  });
});
