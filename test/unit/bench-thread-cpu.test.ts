/** The benchmarks' grouping of a service's threads by nice value (bench/lib/thread-cpu.ts). */
import { describe, expect, it } from 'vitest';
import { threadGroupsBetween, threadKind, type ThreadSample } from '../../bench/lib/thread-cpu.js';

const POOL = [5, 11];
const RENDER = 10;

describe('threadKind', () => {
  it('tells both pool sets, the render thread and the rest apart by nice value', () => {
    expect(threadKind(5, 0, POOL, RENDER)).toBe('pool');
    expect(threadKind(11, 0, POOL, RENDER)).toBe('pool');
    expect(threadKind(10, 0, POOL, RENDER)).toBe('render');
    expect(threadKind(0, 0, POOL, RENDER)).toBe('other');
    expect(threadKind(6, 0, POOL, RENDER)).toBe('other');
  });

  it('counts from the process nice value and caps at 19, as setpriority does', () => {
    expect(threadKind(17, 12, POOL, RENDER)).toBe('pool');
    // 10 + 11 and 10 + 10 both cap at 19: the pool set is asked first.
    expect(threadKind(19, 10, POOL, RENDER)).toBe('pool');
    expect(threadKind(19, 10, [5], RENDER)).toBe('render');
  });
});

describe('threadGroupsBetween', () => {
  it('adds each thread’s CPU between the samples to its group; the front thread is the pid', () => {
    const t = (tid: number, nice: number, cpuMs: number, involuntary = 0): ThreadSample => ({ tid, nice, cpuMs, involuntary });
    const before = [t(100, 0, 1000, 3), t(101, 5, 50), t(102, 11, 20), t(103, 10, 5), t(104, 0, 1)];
    const after = [t(100, 0, 1400, 10), t(101, 5, 80), t(102, 11, 60), t(103, 10, 9), t(104, 0, 12), t(105, 11, 7)];
    const g = threadGroupsBetween(100, before, after, POOL, RENDER);
    expect(g).toEqual({ front: 400, pool: 30 + 40 + 7, render: 4, other: 11, frontPreempted: 7, others: '4:11' });
  });
});
