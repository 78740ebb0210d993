/**
 * Bursts (src/engine/worker/bursts.ts): a background thread's work between two sleeps stays
 * within the budget plus one piece of work, and it sleeps only once the budget is spent.
 */
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { Bursts } from '../../src/engine/worker/bursts.js';

/** ~`ms` of busy work. */
function work(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe('Bursts', () => {
  it('sleeps after each budget of work, so no burst runs much past it', () => {
    const budgetMs = 2;
    const pieceMs = 0.1;
    const b = new Bursts(budgetMs, 0.05);
    b.begin();
    const wall: number[] = [];
    const cpu: number[] = [];
    const cpuMs = () => {
      const u = process.cpuUsage();
      return (u.user + u.system) / 1000;
    };
    let start = performance.now();
    let startCpu = cpuMs();
    const t0 = performance.now();
    while (wall.length < 12 && performance.now() - t0 < 2000) {
      work(pieceMs);
      const beforeCpu = cpuMs();
      const before = performance.now();
      if (b.pause()) {
        wall.push(before - start);
        cpu.push(beforeCpu - startCpu);
        start = performance.now();
        startCpu = cpuMs();
      }
    }
    expect(wall).toHaveLength(12);
    expect(b.pauses).toBe(12);
    // A burst ends once the budget has passed: on average (each is measured from just after
    // pause() returned, a little after the burst's own start, more so when preempted there)...
    expect(wall.reduce((a, x) => a + x, 0)).toBeGreaterThanOrEqual(wall.length * budgetMs * 0.9);
    // ...and holds the core for the budget plus at most the piece that crossed it: this
    // thread's CPU time, so that a preemption by other processes on a busy machine (which
    // counts in wall time) does not count; the median, for the odd slow clock read.
    cpu.sort((x, y) => x - y);
    expect(cpu[cpu.length >> 1]).toBeLessThan(budgetMs + 4 * pieceMs);
  });

  it('does not sleep before the budget is spent, and begin() starts a new burst', () => {
    const b = new Bursts(50, 0.01);
    b.begin();
    work(1);
    expect(b.pause()).toBe(false);
    const slow = new Bursts(1, 0.01);
    work(2); // the burst began at construction
    slow.begin();
    expect(slow.pause()).toBe(false);
    work(1.5);
    expect(slow.pause()).toBe(true);
    expect(slow.pauses).toBe(1);
  });
});
