/**
 * The analysis of sched_switch events in `npm run bench:scrape-p99 -- --sched`
 * (bench/lib/sched-trace.ts): a preemption of the front thread is charged to the threads that
 * ran until it ran again; a sleep (prev_state S) is not a preemption.
 */
import { describe, expect, it } from 'vitest';
import { preemptions, type ThreadClass } from '../../bench/lib/sched-trace.js';

const sw = (t: number, prev: number, state: string, next: number) =>
  ` ${(t / 1000).toFixed(6)}: prev_comm=node prev_pid=${prev} prev_prio=120 prev_state=${state} ==> next_comm=x next_pid=${next} next_prio=120`;

describe('sched-trace preemptions', () => {
  it('charges each preemption of the front thread to the threads that ran, and ignores its sleeps', () => {
    const FRONT = 100;
    const classes = new Map<number, ThreadClass>([
      [101, 'pool'],
      [102, 'render'],
      [103, 'helper'],
    ]);
    const text = [
      sw(1000, FRONT, 'R', 102), // preempted: render runs 0.3 ms
      sw(1000.3, 102, 'S', FRONT),
      sw(1002, FRONT, 'R+', 101), // preempted: pool 1.2 ms, then helper 0.5 ms
      sw(1003.2, 101, 'S', 103),
      sw(1003.7, 103, 'S', FRONT),
      sw(1005, FRONT, 'S', 999), // sleeps (nothing to do): another process runs, no preemption
      sw(1009, 999, 'S', FRONT),
      sw(1010, FRONT, 'R', 999), // preempted by another process, then render
      sw(1012, 999, 'R', 102),
      sw(1012.2, 102, 'S', FRONT),
      'garbage line',
    ].join('\n');
    const p = preemptions(text, FRONT, (tid) => classes.get(tid));
    expect(p.count).toBe(3);
    expect(p.totalMs).toBeCloseTo(0.3 + 1.7 + 2.2, 6);
    expect(p.byClass.pool).toBeCloseTo(1.2, 6);
    expect(p.byClass.render).toBeCloseTo(0.5, 6);
    expect(p.byClass.helper).toBeCloseTo(0.5, 6);
    expect(p.byClass.foreign).toBeCloseTo(2, 6);
    expect(p.ownCount).toBe(2);
    expect(p.ownMs).toBeCloseTo(2, 6);
    expect(p.ownMaxMs).toBeCloseTo(1.7, 6);
    expect(p.ownOver1Ms).toBe(1);
    expect(p.longestRunMs.pool).toBeCloseTo(1.2, 6);
    expect(p.longestRunMs.render).toBeCloseTo(0.3, 6);
    expect(p.runsOver1Ms).toEqual({ pool: 1, render: 0, helper: 0, foreign: 1 });
  });
});
