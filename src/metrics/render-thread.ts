/**
 * Supervises the metrics render thread (render-worker.ts) from the front thread: starts it at
 * the first scrape (a service nobody scrapes pays nothing for it), hands it renderings, and
 * treats any failure (the thread died, a rendering threw or took longer than RENDER_TIMEOUT_MS)
 * the same way: it is logged, the thread is ended, the rendering under way fails (the caller
 * renders on the front thread instead: scrape-renderer.ts), and a new thread is started after
 * a delay that doubles while failures repeat (1 s up to 60 s) and resets after a success.
 * It keeps track of what the thread already has (the rule segments, each tenant's rule columns
 * by version), so that a rendering of an unchanged deployment posts almost nothing.
 */
import { Worker } from 'node:worker_threads';
import { log } from '../log.js';
import { DEFAULT_METRICS_RENDER_NICE } from '../config.js';
import { lowerNewThreads, threadIds } from '../engine/worker/priority.js';
import type { CatalogueEntry } from './label-catalogue.js';
import type { FromRenderThread, RenderRequest, RenderTenantRef, RenderThreadData } from './render-protocol.js';
import { lazyPlain, type Scrape } from './scrape-cache.js';

/**
 * A rendering of 26 MB takes ~0.3-0.6 s of the thread's CPU; far longer means it is stuck. Not
 * much shorter: on a saturated core the niced thread may wait many seconds for its turn, and
 * rendering on the front thread then (the fallback) would slow the routes the niceness protects
 * (scrapes wait instead, up to SERVICE_REQUEST_TIMEOUT_MS, then get 503 with Retry-After).
 */
export const RENDER_TIMEOUT_MS = 60_000;
const START_TIMEOUT_MS = 60_000;
export const RESTART_DELAY_MS = 1000;
const MAX_RESTART_DELAY_MS = 60_000;

export interface RenderThreadOptions {
  /** The compiled thread; defaults to ./render-worker.js next to this file. */
  workerUrl?: URL;
  niceIncrement?: number;
  /** Warm the thread's JIT before its first rendering (render-warm-up.ts). Default false. */
  warmUp?: boolean;
  /** Default RENDER_TIMEOUT_MS. */
  renderTimeoutMs?: number;
}

interface Pending {
  resolve(s: Scrape): void;
  reject(e: Error): void;
  timer: NodeJS.Timeout;
}

/**
 * The render thread's young generation, MB. A rendering makes its whole text as short-lived
 * strings (21 MB at 100,000 rules with Tier 2 on), and V8 grew the thread's young generation to
 * its default maximum for them, which it then kept: 36-42 MB more RSS after a few scrapes at
 * 100,000 rules, against 11-12 MB with this cap (scrapes took ~550 ms instead of ~450: more,
 * smaller scavenges of text that is garbage at once; the thread is niced and off the route path).
 */
export const RENDER_YOUNG_GENERATION_MB = 8;

export class RenderThread {
  #worker: Worker | null = null;
  #ready: Promise<void> | null = null;
  #stopped = false;
  /** No thread is started before this time (after a failure). */
  private restartAt = 0;
  private restartDelay = RESTART_DELAY_MS;
  private restartTimer: NodeJS.Timeout | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  /** What the current thread holds: each tenant's rule-list version, and how many rule segments. */
  private readonly sentVersions = new Map<string, number>();
  private sentSegments = 0;
  private readonly workerUrl: URL;
  private readonly data: RenderThreadData;
  private readonly renderTimeoutMs: number;
  /** Failures so far (the thread died, or a rendering failed or timed out). */
  failures = 0;
  /** The thread's nice value once started (null when it could not be changed). */
  nice: number | null = null;

  constructor(opts: RenderThreadOptions = {}) {
    this.workerUrl = opts.workerUrl ?? new URL('./render-worker.js', import.meta.url);
    this.data = { niceIncrement: opts.niceIncrement ?? DEFAULT_METRICS_RENDER_NICE, warmUp: opts.warmUp === true };
    this.renderTimeoutMs = opts.renderTimeoutMs ?? RENDER_TIMEOUT_MS;
  }

  /** The thread, while one runs (for tests). */
  get worker(): Worker | null {
    return this.#worker;
  }

  /** Whether a rendering may be handed over now: a thread runs, or may be started. */
  available(): boolean {
    return !this.#stopped && (this.#worker !== null || Date.now() >= this.restartAt);
  }

  /**
   * The text `front` followed by the per-rule families of `tenants`, rendered and compressed
   * on the thread. Rejects when the thread is not available or fails.
   */
  async render(front: string, tenants: readonly CatalogueEntry[], segments: readonly SharedArrayBuffer[]): Promise<Scrape> {
    const w = await this.started();
    const refs: RenderTenantRef[] = tenants.map((t) => {
      const fresh = this.sentVersions.get(t.rules.tenantId) !== t.version;
      if (fresh) this.sentVersions.set(t.rules.tenantId, t.version);
      return { tenantId: t.rules.tenantId, version: t.version, predictionEnabled: t.predictionEnabled, ...(fresh && { rules: t.rules }) };
    });
    const msg: RenderRequest = { type: 'render', id: this.nextId++, front, tenants: refs };
    if (segments.length !== this.sentSegments) {
      msg.segments = [...segments];
      this.sentSegments = segments.length;
    }
    return new Promise<Scrape>((resolve, reject) => {
      const timer = setTimeout(() => this.fail(w, `no rendering within ${this.renderTimeoutMs} ms`), this.renderTimeoutMs);
      this.pending.set(msg.id, { resolve, reject, timer });
      w.postMessage(msg);
    });
  }

  /** The running thread, started first if there is none (rejects when it is down or fails to start). */
  async started(): Promise<Worker> {
    if (!this.available()) throw new Error('metrics render thread is down');
    if (this.#worker === null) this.spawn();
    const w = this.#worker!;
    await this.#ready;
    if (this.#worker !== w) throw new Error('metrics render thread failed while starting');
    return w;
  }

  /** Ends the thread for good (service stop). */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    const w = this.#worker;
    this.#worker = null;
    this.rejectAll(new Error('metrics render thread stopped'));
    if (w) await w.terminate();
  }

  private spawn(): void {
    const before = threadIds();
    const w = new Worker(this.workerUrl, { name: 'metrics-render', workerData: this.data, resourceLimits: { maxYoungGenerationSizeMb: RENDER_YOUNG_GENERATION_MB } });
    // Lowered at once, not only when its modules have loaded: it starts at the first scrape,
    // under load, and its start-up would otherwise take the front thread's core in long runs.
    lowerNewThreads(before, this.data.niceIncrement);
    w.unref(); // never what keeps the process alive
    this.#worker = w;
    this.sentVersions.clear();
    this.sentSegments = 0;
    this.#ready = new Promise<void>((resolve) => {
      const timer = setTimeout(() => this.fail(w, `not ready within ${START_TIMEOUT_MS} ms`), START_TIMEOUT_MS);
      const done = () => {
        clearTimeout(timer);
        resolve();
      };
      w.on('message', (m: FromRenderThread) => {
        if (m.type === 'ready') {
          this.nice = m.nice;
          log.info('metrics render thread started', { nice: m.nice, ...(typeof m.warmUpMs === 'number' && { warm_up_ms: m.warmUpMs }) });
          done();
        } else this.answer(w, m);
      });
      w.once('exit', done); // fail() below has logged it; render() sees the thread gone
    });
    w.on('error', (e) => this.fail(w, String((e as Error)?.stack ?? e)));
    w.on('exit', (code) => this.fail(w, `exited with code ${code}`));
  }

  private answer(w: Worker, m: Exclude<FromRenderThread, { type: 'ready' }>): void {
    const p = this.pending.get(m.id);
    if (p === undefined) return;
    if (m.type === 'failed') return this.fail(w, m.error);
    this.pending.delete(m.id);
    clearTimeout(p.timer);
    this.restartDelay = RESTART_DELAY_MS;
    const gzip = [Buffer.from(m.gzip)];
    p.resolve({ gzip, plain: lazyPlain(gzip) });
  }

  /** Any failure of thread `w`: logged once, the thread ended, its renderings failed, a new one scheduled. */
  private fail(w: Worker, reason: string): void {
    if (this.#worker !== w) return; // already handled, or stopped
    this.#worker = null;
    this.failures++;
    const delay = this.restartDelay;
    this.restartDelay = Math.min(this.restartDelay * 2, MAX_RESTART_DELAY_MS);
    this.restartAt = Date.now() + delay;
    log.error('metrics render thread failed; scrapes are rendered on the front thread until it is back', { reason, restart_in_ms: delay });
    this.rejectAll(new Error(`metrics render thread failed: ${reason}`));
    void w.terminate();
    this.restartTimer = setTimeout(() => {
      this.restartTimer = null;
      if (!this.#stopped && this.#worker === null) this.spawn();
    }, delay);
    this.restartTimer.unref();
  }

  private rejectAll(e: Error): void {
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(e);
    }
    this.pending.clear();
  }
}
