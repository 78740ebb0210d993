/**
 * Supervises the webhook delivery thread (delivery-worker.ts) from the front thread: starts
 * it, restarts it when it dies (the caller then hands it every pending delivery again),
 * stops it with a grace period, and turns deliveries and webhook changes into the messages
 * of protocol.ts. It keeps no delivery state: the front thread's records are the truth.
 */
import { Worker } from 'node:worker_threads';
import type { Config } from '../config.js';
import { log } from '../log.js';
import { WEBHOOK_MAX_ATTEMPTS, type DeliveryWorkerOptions, type FromWorker, type ToWorker, type WebhookTarget } from './protocol.js';
import type { DeliveryRecord, WebhookRecord } from './records.js';

export const DELIVERY_CONCURRENCY = 64;
export const DELIVERY_CONCURRENCY_PER_WEBHOOK = 8;
/** Requests in flight per tenant (all its webhooks): a quarter of the thread's slots. */
export const DELIVERY_CONCURRENCY_PER_TENANT = 16;
/** The most `stop()` lets requests in flight run before aborting them. */
export const STOP_GRACE_MS = 3000;
/** Wait before restarting a thread that died. */
const RESTART_DELAY_MS = 1000;

export type AttemptMessage = Extract<FromWorker, { type: 'attempt' }>;
export type ThreadState = 'new' | 'running' | 'stopping' | 'stopped';

export interface DeliveryThreadOptions {
  config: Pick<Config, 'webhookAllowPrivate' | 'webhookTimeoutMs' | 'webhookBackoffMs'>;
  version: string;
  /** The compiled delivery thread; defaults to ./delivery-worker.js next to this file. */
  workerUrl?: URL;
  /** One attempt was made (reported by the thread). */
  onAttempt(m: AttemptMessage): void;
  /** The thread was restarted after dying: everything pending must be handed to it again. */
  onRestart(): void;
}

export class DeliveryThread {
  #worker: Worker | null = null;
  #state: ThreadState = 'new';
  /** A dead thread's restart is waiting for its delay: ensure() leaves it to the restart. */
  #restarting = false;
  private onStopped: (() => void) | null = null;
  private readonly workerOptions: DeliveryWorkerOptions;
  private readonly workerUrl: URL;

  constructor(private readonly opts: DeliveryThreadOptions) {
    this.workerUrl = opts.workerUrl ?? new URL('./delivery-worker.js', import.meta.url);
    this.workerOptions = {
      timeoutMs: opts.config.webhookTimeoutMs,
      backoffMs: [...opts.config.webhookBackoffMs],
      allowPrivate: opts.config.webhookAllowPrivate,
      version: opts.version,
      maxConcurrency: DELIVERY_CONCURRENCY,
      maxPerWebhook: DELIVERY_CONCURRENCY_PER_WEBHOOK,
      maxPerTenant: DELIVERY_CONCURRENCY_PER_TENANT,
    };
  }

  get state(): ThreadState {
    return this.#state;
  }

  /** True from start() until stop() begins: deliveries may be handed over. */
  get running(): boolean {
    return this.#state === 'running';
  }

  /** The thread while one runs (null between a death and its restart). */
  get worker(): Worker | null {
    return this.#worker;
  }

  /**
   * Deliveries may be handed over from now on. The thread itself starts with the first
   * webhook or delivery (ensure): a service without webhooks runs none. It is a whole
   * Node.js environment with undici loaded, ~20 MB of the process's memory.
   */
  start(): void {
    if (this.#state !== 'new') return;
    this.#state = 'running';
  }

  /** Starts the thread unless one runs (or a restart is due): before a delivery, and when a webhook exists. */
  ensure(): void {
    if (this.#state === 'running' && this.#worker === null && !this.#restarting) this.spawn();
  }

  /**
   * Nothing new starts; requests in flight get up to min(timeout, 3 s) to finish (their
   * attempts are still reported), then are aborted and the thread ends.
   */
  async stop(): Promise<void> {
    if (this.#state !== 'running') return;
    this.#state = 'stopping';
    const w = this.#worker;
    if (w) {
      const graceMs = Math.min(this.workerOptions.timeoutMs, STOP_GRACE_MS);
      const stopped = new Promise<void>((resolve) => (this.onStopped = resolve));
      w.postMessage({ type: 'stop', graceMs } satisfies ToWorker);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([stopped, new Promise<void>((r) => (timer = setTimeout(r, graceMs + 2000)))]);
      clearTimeout(timer);
      this.#worker = null;
      await w.terminate();
    }
    this.#state = 'stopped';
  }

  /** Hands a pending delivery to the thread (a resumed one continues its series). */
  deliver(tenantId: string, hook: WebhookRecord, rec: DeliveryRecord): void {
    this.ensure();
    const attemptsMade = rec.attempts.filter((a) => a.series === rec.series).length;
    this.post({
      type: 'deliver',
      target: target(tenantId, hook),
      job: {
        id: rec.id,
        tenantId,
        webhookId: hook.id,
        eventType: rec.event_type,
        body: rec.body,
        attemptsMade: Math.min(attemptsMade, WEBHOOK_MAX_ATTEMPTS - 1),
        maxAttempts: WEBHOOK_MAX_ATTEMPTS,
      },
    });
  }

  /** The webhook's url or secret changed: queued and retried jobs use the new ones. */
  retarget(tenantId: string, hook: WebhookRecord): void {
    this.post({ type: 'target', target: target(tenantId, hook) });
  }

  /** The webhook was deleted: its queued jobs go, its requests are aborted. */
  cancel(tenantId: string, webhookId: string): void {
    this.post({ type: 'cancel', tenantId, webhookId });
  }

  /** The front thread dropped this pending delivery (backlog cap): not to be sent if not yet sent. */
  drop(tenantId: string, webhookId: string, id: string): void {
    this.post({ type: 'drop', tenantId, webhookId, id });
  }

  private post(msg: ToWorker): void {
    this.#worker?.postMessage(msg);
  }

  private spawn(): void {
    const w = new Worker(this.workerUrl, { workerData: this.workerOptions, name: 'webhook-delivery' });
    w.on('message', (m: FromWorker) => {
      if (m.type === 'stopped') this.onStopped?.();
      else this.opts.onAttempt(m);
    });
    w.on('error', (e) => log.error('webhook delivery thread failed', { err: String((e as Error)?.stack ?? e) }));
    w.on('exit', (code) => {
      if (this.#worker !== w) return;
      this.#worker = null;
      if (this.#state === 'stopping') {
        this.onStopped?.();
        return;
      }
      if (this.#state !== 'running') return;
      log.error('webhook delivery thread exited; restarting it', { code });
      this.#restarting = true;
      setTimeout(() => {
        this.#restarting = false;
        if (this.#state !== 'running' || this.#worker) return;
        this.spawn();
        this.opts.onRestart();
      }, RESTART_DELAY_MS).unref();
    });
    this.#worker = w;
  }
}

function target(tenantId: string, hook: WebhookRecord): WebhookTarget {
  return { tenantId, webhookId: hook.id, url: hook.url, secret: hook.secret };
}
