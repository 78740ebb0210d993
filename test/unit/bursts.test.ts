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
    const bursts: number[] = [];
    let start = performance.now();
    while (bursts.length < 12) {
      work(pieceMs);
      const before = performance.now();
      if (b.pause()) {
        bursts.push(before - start);
        start = performance.now();
      }
    }
    expect(b.pauses).toBe(bursts.length);
    // Each burst is the budget plus at most the piece that crossed it (plus the odd preemption by
    // other processes on a busy machine: the median is the bound that must hold).
    bursts.sort((x, y) => x - y);
    expect(bursts[0]).toBeGreaterThanOrEqual(budgetMs);
    expect(bursts[bursts.length >> 1]).toBeLessThan(budgetMs + 4 * pieceMs);
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
