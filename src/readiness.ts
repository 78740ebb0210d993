/**
 * Readiness (GET /ready), apart from liveness (GET /): may this instance take traffic now?
 * It is ready when the store takes a write, the worker pool answers a task, and the
 * evaluation cycle has finished within the last 3 intervals (so health and failover are
 * current). Each check is bounded by a timeout, so a hung dependency answers 503, not never.
 */
import type { Store } from './store/store.js';

export const READINESS_CHECK_TIMEOUT_MS = 2000;
/** Evaluation is stale when no cycle finished within this many intervals. */
export const STALE_CYCLES = 3;

export interface ReadinessSources {
  store: Store;
  pingPool(timeoutMs: number): Promise<void>;
  engineRunning(): boolean;
  intervalMs: number;
  /** When the engine started, and when its last cycle finished (NaN before the first), epoch ms. */
  engineStartedAtMs(): number;
  lastCycleEndMs(): number;
  now?: () => number;
}

export interface CheckResult {
  ok: boolean;
  /** Why it is not ready; absent when ok. */
  message?: string;
}

export interface Readiness {
  status: 'ready' | 'not_ready';
  /** Names of the failing checks (empty when ready). */
  not_ready: string[];
  checks: { store: CheckResult; worker_pool: CheckResult; evaluation: CheckResult & { last_cycle_age_ms: number | null } };
}

function withTimeout(p: Promise<void>, ms: number, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
    p.then(
      () => (clearTimeout(t), resolve()),
      (e: unknown) => (clearTimeout(t), reject(e)),
    );
  });
}

const settle = (p: Promise<void>): Promise<CheckResult> =>
  p.then(
    () => ({ ok: true }),
    (e: unknown) => ({ ok: false, message: e instanceof Error ? e.message : String(e) }),
  );

export async function checkReadiness(src: ReadinessSources): Promise<Readiness> {
  const now = (src.now ?? Date.now)();
  const storeCheck = src.store.connected()
    ? settle(withTimeout(src.store.checkWritable(), READINESS_CHECK_TIMEOUT_MS, 'the store')).then((r) =>
        r.ok ? r : { ok: false, message: `the store does not take writes: ${r.message}` },
      )
    : Promise.resolve<CheckResult>({ ok: false, message: 'the store is not connected' });
  const poolCheck = settle(src.pingPool(READINESS_CHECK_TIMEOUT_MS)).then((r) => (r.ok ? r : { ok: false, message: `the worker pool does not answer: ${r.message}` }));
  const [store, worker_pool] = await Promise.all([storeCheck, poolCheck]);

  const last = src.lastCycleEndMs();
  const age = Number.isNaN(last) ? null : Math.max(0, now - last);
  // Before the first cycle, the engine's start is the reference: a fresh instance is not
  // stale for its first 3 intervals.
  const sinceRef = age ?? now - src.engineStartedAtMs();
  const limit = STALE_CYCLES * src.intervalMs;
  let evaluation: Readiness['checks']['evaluation'];
  if (!src.engineRunning()) evaluation = { ok: false, message: 'the engine is not running', last_cycle_age_ms: age };
  else if (sinceRef > limit) {
    evaluation = { ok: false, message: `no evaluation cycle finished in the last ${limit} ms (${STALE_CYCLES} intervals)`, last_cycle_age_ms: age };
  } else evaluation = { ok: true, last_cycle_age_ms: age };

  const checks = { store, worker_pool, evaluation };
  const not_ready = Object.entries(checks)
    .filter(([, c]) => !c.ok)
    .map(([name]) => name);
  return { status: not_ready.length === 0 ? 'ready' : 'not_ready', not_ready, checks };
}
