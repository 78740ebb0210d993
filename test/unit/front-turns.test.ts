/**
 * The front thread's background work takes turns (src/front-turns.ts): one waiting slice
 * resumes per turn of the event loop, in the order they asked, so several pieces of background
 * work running at once never put their slices back to back in one turn.
 */
import { describe, expect, it } from 'vitest';
import { turnsWaiting, yieldTurn } from '../../src/front-turns.js';

/** Counts turns of the event loop: one setImmediate callback per turn. */
function turnCounter() {
  const c = { turn: 0, stopped: false };
  const tick = () => {
    c.turn++;
    if (!c.stopped) setImmediate(tick);
  };
  setImmediate(tick);
  return c;
}

describe('yieldTurn', () => {
  it('resumes one waiting slice per turn of the event loop, first asked first resumed', async () => {
    const counter = turnCounter();
    const resumed: { worker: number; turn: number }[] = [];
    const work = async (worker: number) => {
      for (let slice = 0; slice < 5; slice++) {
        await yieldTurn();
        resumed.push({ worker, turn: counter.turn });
      }
    };
    await Promise.all([work(0), work(1), work(2)]);
    counter.stopped = true;
    expect(resumed).toHaveLength(15);
    // Never two slices in one turn.
    expect(new Set(resumed.map((r) => r.turn)).size).toBe(15);
    // Round robin: each worker asks again after its slice, behind the others already waiting.
    expect(resumed.slice(0, 6).map((r) => r.worker)).toEqual([0, 1, 2, 0, 1, 2]);
    expect(turnsWaiting()).toBe(0);
  });

  it('lets I/O callbacks run between two slices', async () => {
    const { createServer, connect } = await import('node:net');
    const server = createServer((s) => s.end('x'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    let answered = false;
    const sock = connect(port, '127.0.0.1');
    sock.on('data', () => (answered = true));
    // Background work that would run forever on microtasks alone: it must not hold the socket's answer.
    let slices = 0;
    while (!answered && slices < 100_000) {
      await yieldTurn();
      slices++;
    }
    sock.destroy();
    await new Promise((r) => server.close(r));
    expect(answered).toBe(true);
  });
});
