/**
 * Runs a scenario against an engine in virtual time. Payments arrive as a seeded Poisson
 * process; each routed payment's outcome is drawn from the chosen processor's state at the
 * moment it was sent and reported back only once its latency has elapsed, so an outage
 * made of 15 s timeouts is as slow to observe as it is in production.
 *
 * The driver knows nothing of transport: an adapter can call the engine in-process or over
 * HTTP. Adapters receive `clock.now()`; pass the engine the same VirtualClock.
 */
import { VirtualClock } from './clock.js';
import { MinHeap } from './min-heap.js';
import { drawOutcome, type Outcome } from './processor.js';
import { Rng } from './rng.js';
import type { Scenario } from './scenarios.js';

export interface RouteDecision {
  processorId: string;
  weight?: number;
  decisionSource?: string;
  failureProbability?: number | null;
}

export interface EngineAdapter {
  route(nowMs: number): RouteDecision | Promise<RouteDecision>;
  outcome(nowMs: number, processorId: string, outcome: Outcome): void | Promise<void>;
  /** Called every `tickMs` of virtual time: the engine's periodic work (health evaluation, training). */
  tick?(nowMs: number): void | Promise<void>;
}

/** One routed payment. `t` is scenario time (ms since start) at which it was routed. */
export interface TxEvent {
  readonly t: number;
  readonly decision: RouteDecision;
  readonly outcome: Outcome;
}

export interface RunOptions {
  scenario: Scenario;
  /** Mean arrival rate, payments per second of scenario time. */
  ratePerSec: number;
  seed: number;
  adapter: EngineAdapter;
  /** Shared with the engine under test; defaults to a fresh clock at 0. Scenario time 0 is its value on entry. */
  clock?: VirtualClock;
  /** Interval between adapter.tick calls; default DEFAULT_TICK_MS. */
  tickMs?: number;
}

/** Fine enough for an engine's ~5 s evaluation cycle to land within 1 s of its due time. */
export const DEFAULT_TICK_MS = 1_000;

interface Pending {
  processorId: string;
  outcome: Outcome;
}

/** Runs to `scenario.durationMs` and returns every routed payment in routing order. */
export async function runScenario(opts: RunOptions): Promise<TxEvent[]> {
  const { scenario, adapter, ratePerSec } = opts;
  if (!(ratePerSec > 0)) throw new Error('runScenario: ratePerSec must be positive');
  const clock = opts.clock ?? new VirtualClock();
  const origin = clock.now();
  const tickMs = opts.tickMs ?? DEFAULT_TICK_MS;

  // Separate streams: the arrival times do not depend on the engine's choices, and each
  // processor's outcomes do not depend on how often the other one was used.
  const root = new Rng(opts.seed);
  const arrivals = root.fork('arrivals');
  const processors = new Map(
    [scenario.primary, scenario.secondary].map((model) => [model.id, { model, rng: root.fork(`outcomes:${model.id}`) }]),
  );
  const nextGapMs = (): number => arrivals.exponential(ratePerSec) * 1000;

  const pending = new MinHeap<Pending>();
  const events: TxEvent[] = [];
  let nextArrival = nextGapMs();
  let nextTick = adapter.tick ? tickMs : Infinity;

  for (;;) {
    const nextOutcome = pending.peekKey() ?? Infinity;
    const t = Math.min(nextArrival, nextTick, nextOutcome);
    if (t >= scenario.durationMs) break;
    clock.advanceTo(origin + t);
    const now = clock.now();
    // At equal times: outcomes first, then the tick, then the arrival, so each step sees
    // everything that happened before it.
    if (nextOutcome === t) {
      const { processorId, outcome } = pending.pop() as Pending;
      await adapter.outcome(now, processorId, outcome);
    } else if (nextTick === t) {
      await adapter.tick?.(now);
      nextTick += tickMs;
    } else {
      const decision = { ...(await adapter.route(now)) };
      const processor = processors.get(decision.processorId);
      if (!processor) throw new Error(`engine routed to unknown processor "${decision.processorId}"`);
      const outcome = drawOutcome(processor.model, t, processor.rng);
      events.push({ t, decision, outcome });
      pending.push(t + outcome.latency_ms, { processorId: decision.processorId, outcome });
      nextArrival = t + nextGapMs();
    }
  }
  return events;
}
