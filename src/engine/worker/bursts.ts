/**
 * Long work of a background thread (an evaluation task on a pool thread, a rendering on the
 * metrics render thread) done in short bursts, each followed by a brief sleep. Why: a lower
 * nice value (priority.ts) gives such a thread a smaller share of a contended core, but not
 * shorter turns. Linux's scheduler (EEVDF) still lets it run a full time slice (~1.4 ms here)
 * whenever its turn comes, and every route the front thread has in hand waits that long: with
 * the service on one core, a 1,000-rule evaluation or one /metrics/ rendering was a string of
 * 1.4 ms stalls of the front thread. A thread that sleeps after BURST_MS of work gives the core
 * back after at most that long; its share stays what its nice value says. On an idle core the
 * cost is one short sleep per burst (~0.06 ms with the kernel's timer slack).
 * The sleep is Atomics.wait on a private cell nobody notifies (a thread may block; node's
 * front thread could too, but is never asked to: it must not sleep).
 *
 * How long it sleeps depends on whether the core is contended. A token sleep (PAUSE_MS) while
 * the thread wakes on time: a core of its own, or an idle one, where a cycle or a rendering
 * runs at full speed. But beside a busy front thread on one core (a one-CPU machine, or the
 * service pinned to one core, as `npm run bench` pins it) a token sleep gave the core back for
 * ~0.06 ms only: the thread, having waited, was let preempt the front thread again as soon as
 * it woke, so its bursts came three in a row, ~0.9 ms with the front thread held, once every
 * scheduler tick (4 ms), for the 50-180 ms of a cycle at 100,000 rules (`perf sched timehist`,
 * 2026-12-01). Such a thread also wakes late now and then (the front thread kept the core
 * until its tick): after a wake-up more than CONTENDED_LATE_MS late, it sleeps
 * SHARED_CORE_PAUSE_MS (three bursts' length) for the next CONTENDED_HOLD_MS. The front thread
 * then runs ~0.8 ms between two bursts and no request waits for more than one, while the
 * thread's share stays the quarter of the core its nice value gives it anyway (priority.ts).
 */
import { performance } from 'node:perf_hooks';

/** Work between two sleeps, ms. */
export const BURST_MS = 0.25;
/** The sleep on a core the thread does not have to share, ms (the kernel rounds it up by its timer slack, 0.05 ms by default). */
export const PAUSE_MS = 0.01;
/** The sleep on a contended core, ms: three bursts' length, about the quarter of the core nice +5 gives the thread. */
export const SHARED_CORE_PAUSE_MS = 3 * BURST_MS;
/** A wake-up later than this after the sleep asked for (ms) means another thread had the core. */
export const CONTENDED_LATE_MS = 0.5;
/** How long the shared-core sleep is kept after a late wake-up, ms. */
export const CONTENDED_HOLD_MS = 1000;

/** Whether a sleep of `askedMs` that took `tookMs` woke late: another thread had the core meanwhile. */
export function wokeLate(askedMs: number, tookMs: number): boolean {
  return tookMs > askedMs + CONTENDED_LATE_MS;
}

/**
 * Pieces of trivial work (tens of ns each: a rule with nothing to judge) between two reads of
 * the clock. A read costs more than such a piece (performance.now() ~50 ns here), and at
 * 100,000 rules the reads after each of them were half of a cycle's CPU on the pool thread,
 * which shares the front thread's core. 64 of them add well under a microsecond to a burst.
 */
export const TRIVIAL_PIECES_PER_CHECK = 64;

export class Bursts {
  private readonly cell = new Int32Array(new SharedArrayBuffer(4));
  private started = performance.now();
  /** performance.now() until which the thread sleeps sharedPauseMs (set by a late wake-up). */
  private contendedUntil = -Infinity;
  /** Sleeps taken so far, and those of them on a contended core (tests, benches). */
  pauses = 0;
  contendedPauses = 0;
  /** Trivial pieces since the clock was last read (pauseAfterTrivial). */
  private trivial = 0;

  constructor(
    private readonly burstMs = BURST_MS,
    private readonly pauseMs = PAUSE_MS,
    private readonly sharedPauseMs = SHARED_CORE_PAUSE_MS,
    /** Sleeps `ms` (tests replace it: a sleep that ends late stands for a contended core). */
    private readonly sleep: (ms: number) => void = (ms) => void Atomics.wait(this.cell, 0, 0, ms),
  ) {}

  /** Begins a burst (at the start of a task: the thread was idle before it). */
  begin(): void {
    this.started = performance.now();
  }

  /** Whether the thread is sleeping the shared-core length now (a late wake-up within CONTENDED_HOLD_MS). */
  contended(): boolean {
    return performance.now() < this.contendedUntil;
  }

  /**
   * Call between two small pieces of work (each well under burstMs): sleeps once the current
   * burst has run burstMs, then begins the next. Returns whether it slept.
   */
  pause(): boolean {
    this.trivial = 0;
    const t = performance.now();
    if (t - this.started < this.burstMs) return false;
    const shared = t < this.contendedUntil;
    const askedMs = shared ? this.sharedPauseMs : this.pauseMs;
    this.sleep(askedMs);
    const woke = performance.now();
    this.pauses++;
    if (shared) this.contendedPauses++;
    if (wokeLate(askedMs, woke - t)) this.contendedUntil = woke + CONTENDED_HOLD_MS;
    this.started = woke;
    return true;
  }

  /**
   * pause() for a piece of trivial work (far under a microsecond): the clock is read, and the
   * thread may sleep, only at every TRIVIAL_PIECES_PER_CHECK-th such call in a row.
   */
  pauseAfterTrivial(): boolean {
    if (++this.trivial < TRIVIAL_PIECES_PER_CHECK) return false;
    return this.pause();
  }
}
