/**
 * The delivery thread's logic, independent of the thread itself (unit-testable in-process):
 * per-webhook queues served round-robin under a global concurrency cap and a per-webhook cap,
 * so a slow or dead receiver holds at most `maxPerWebhook` slots and never delays another
 * webhook's deliveries; 3 attempts per series with back-off between them; one report per
 * attempt back to the front thread, which is the only writer of the store.
 */
import { Agent, request } from 'undici';
import { isIP } from 'node:net';
import { bareHost, guardedLookup, PrivateAddressError, refusedHost } from './address.js';
import type { AttemptReport, DeliveryJob, DeliveryWorkerOptions, FromWorker, ToWorker, WebhookTarget } from './protocol.js';
import { sign } from './signature.js';
import { log } from '../log.js';

/** Sends one request; resolves with the status code, rejects on network errors and aborts. */
export type SendFn = (url: string, headers: Record<string, string>, body: Buffer, signal: AbortSignal) => Promise<number>;

interface Hook {
  target: WebhookTarget;
  queue: Job[];
  inFlight: number;
  waiting: number;
}

interface Job extends DeliveryJob {
  key: string;
  bytes: Buffer;
}

interface Running {
  job: Job;
  ac: AbortController;
  /** Aborted by stop or cancel: the attempt is not reported (the delivery stays pending). */
  interrupted: boolean;
}

const keyOf = (tenantId: string, webhookId: string) => `${tenantId}\u0000${webhookId}`;

export function undiciSender(opts: DeliveryWorkerOptions): { send: SendFn; close(): Promise<void> } {
  const agent = new Agent({
    keepAliveTimeout: 4_000,
    connect: opts.allowPrivate ? { timeout: opts.timeoutMs } : { timeout: opts.timeoutMs, lookup: guardedLookup() as never },
    headersTimeout: opts.timeoutMs,
    bodyTimeout: opts.timeoutMs,
  });
  const send: SendFn = async (url, headers, body, signal) => {
    if (!opts.allowPrivate) {
      // IP literals never reach the lookup: check them here (also catches a registration made
      // while SERVICE_WEBHOOK_ALLOW_PRIVATE was on). Names are checked by what they resolve to.
      const host = new URL(url).hostname;
      const why = isIP(bareHost(host)) ? refusedHost(host) : null;
      if (why) throw new PrivateAddressError(`destination refused: ${why}`);
    }
    // Redirects are not followed: a 3xx is a failed attempt.
    const res = await request(url, { method: 'POST', headers, body, dispatcher: agent, signal });
    try {
      await res.body.dump({ limit: 64 * 1024 });
    } catch {
      // the status is what counts; an unread or cut body does not change it
    }
    return res.statusCode;
  };
  return { send, close: () => agent.close().catch(() => undefined) };
}

/**
 * What the tenant sees of a failed attempt: a generic reason that never says how a host name
 * resolves inside this network (`vm resolves to 127.0.0.1`) or which address refused; the
 * full detail goes to the operator log only (see attempt()).
 */
export function tenantReason(err: unknown, timedOut: boolean, timeoutMs: number): string {
  if (timedOut) return `timeout: no complete response within ${timeoutMs} ms`;
  const e = err as { code?: string; name?: string; cause?: { code?: string } };
  const code = e?.code ?? e?.name ?? 'Error';
  if (code === 'EPRIVATEADDR') return 'destination refused: the host is not a public address';
  if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return describe(err, false, timeoutMs);
  // The error code only (from the cause, or named in the message): never its addresses.
  const named = /\b(E[A-Z]{3,}|UND_ERR_[A-Z_]+)\b/.exec(String((err as Error)?.message ?? ''))?.[1];
  const net = e?.cause?.code ?? (code === 'Error' && named ? named : code);
  const known: Record<string, string> = {
    ECONNREFUSED: 'connection refused',
    ECONNRESET: 'connection reset',
    ENOTFOUND: 'host name not found',
    EAI_AGAIN: 'host name lookup failed',
    EHOSTUNREACH: 'host unreachable',
    ENETUNREACH: 'network unreachable',
    ETIMEDOUT: 'connection timed out',
    UND_ERR_SOCKET: 'connection closed by the receiver',
    EPIPE: 'connection closed by the receiver',
  };
  return `${net}: ${known[net] ?? 'request failed'}`;
}

function describe(err: unknown, timedOut: boolean, timeoutMs: number): string {
  if (timedOut) return `timeout: no complete response within ${timeoutMs} ms`;
  const e = err as { code?: string; name?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e?.code ?? e?.name ?? 'Error';
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
      return `timeout: could not connect within ${timeoutMs} ms`;
    case 'UND_ERR_HEADERS_TIMEOUT':
      return `timeout: no response headers within ${timeoutMs} ms`;
    case 'UND_ERR_BODY_TIMEOUT':
      return `timeout: response body stalled for ${timeoutMs} ms`;
  }
  const cause = e?.cause?.code ? ` (${e.cause.code}${e.cause.message ? `: ${e.cause.message}` : ''})` : '';
  return `${code}: ${e?.message ?? String(err)}${cause}`.slice(0, 300);
}

export class DeliveryEngine {
  private readonly hooks = new Map<string, Hook>();
  private readonly running = new Map<string, Running>();
  private readonly timers = new Map<string, { timer: NodeJS.Timeout; job: Job }>();
  private inFlight = 0;
  /** Requests in flight per tenant (capped by maxPerTenant). */
  private readonly tenantInFlight = new Map<string, number>();
  private stopping = false;
  private stoppedSent = false;
  private readonly userAgent: string;

  constructor(
    private readonly opts: DeliveryWorkerOptions,
    private readonly post: (msg: FromWorker) => void,
    private readonly send: SendFn,
    private readonly onStopped: () => void = () => {},
  ) {
    this.userAgent = `payment-routing-engine/${opts.version}`;
  }

  handle(msg: ToWorker): void {
    switch (msg.type) {
      case 'deliver':
        return this.deliver(msg.target, msg.job);
      case 'target': {
        const h = this.hooks.get(keyOf(msg.target.tenantId, msg.target.webhookId));
        if (h) h.target = msg.target;
        return;
      }
      case 'cancel':
        return this.cancel(keyOf(msg.tenantId, msg.webhookId));
      case 'drop':
        return this.drop(keyOf(msg.tenantId, msg.webhookId), msg.id);
      case 'stop':
        return this.stop(msg.graceMs);
    }
  }

  /** Jobs known to the engine (queued, waiting for a retry or in flight). */
  get size(): number {
    let n = this.running.size + this.timers.size;
    for (const h of this.hooks.values()) n += h.queue.length;
    return n;
  }

  private deliver(target: WebhookTarget, job: DeliveryJob): void {
    if (this.stopping) return;
    if (this.running.has(job.id) || this.timers.has(job.id)) return;
    const key = keyOf(target.tenantId, target.webhookId);
    let h = this.hooks.get(key);
    if (!h) {
      h = { target, queue: [], inFlight: 0, waiting: 0 };
      this.hooks.set(key, h);
    }
    h.target = target;
    if (h.queue.some((j) => j.id === job.id)) return;
    h.queue.push({ ...job, key, bytes: Buffer.from(job.body, 'utf8') });
    this.pump();
  }

  private cancel(key: string): void {
    const h = this.hooks.get(key);
    if (!h) return;
    h.queue.length = 0;
    for (const [id, t] of this.timers) {
      if (t.job.key === key) {
        clearTimeout(t.timer);
        this.timers.delete(id);
      }
    }
    h.waiting = 0;
    for (const r of this.running.values()) {
      if (r.job.key === key) {
        r.interrupted = true;
        r.ac.abort();
      }
    }
    this.hooks.delete(key);
  }

  /** A dropped delivery not yet sent leaves the queue (or its retry timer); one in flight finishes unreported. */
  private drop(key: string, id: string): void {
    const h = this.hooks.get(key);
    const t = this.timers.get(id);
    if (t) {
      clearTimeout(t.timer);
      this.timers.delete(id);
      if (h) h.waiting--;
    }
    if (h) {
      const i = h.queue.findIndex((j) => j.id === id);
      if (i >= 0) h.queue.splice(i, 1);
    }
    const r = this.running.get(id);
    if (r) r.interrupted = true;
    if (h) this.release(h);
  }

  /**
   * Round-robin over webhooks with queued jobs, within the three caps (all, per tenant, per
   * webhook): a tenant with 50 dead receivers holds at most maxPerTenant requests, so another
   * tenant's event starts at once.
   */
  private pump(): void {
    if (this.stopping) return;
    let progressed = true;
    while (progressed && this.inFlight < this.opts.maxConcurrency) {
      progressed = false;
      for (const [key, h] of [...this.hooks]) {
        if (this.inFlight >= this.opts.maxConcurrency) break;
        if (h.queue.length === 0 || h.inFlight >= this.opts.maxPerWebhook) continue;
        if ((this.tenantInFlight.get(h.target.tenantId) ?? 0) >= this.opts.maxPerTenant) continue;
        const job = h.queue.shift()!;
        // move this webhook to the back of the rotation
        this.hooks.delete(key);
        this.hooks.set(key, h);
        void this.attempt(h, job);
        progressed = true;
      }
    }
  }

  private async attempt(h: Hook, job: Job): Promise<void> {
    this.inFlight++;
    h.inFlight++;
    const tenant = job.tenantId;
    this.tenantInFlight.set(tenant, (this.tenantInFlight.get(tenant) ?? 0) + 1);
    const run: Running = { job, ac: new AbortController(), interrupted: false };
    this.running.set(job.id, run);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      run.ac.abort();
    }, this.opts.timeoutMs);
    const startedAt = new Date();
    const t0 = performance.now();
    let status: number | null = null;
    let error: string | null = null;
    const target = h.target;
    try {
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'user-agent': this.userAgent,
        'x-service-delivery': job.id,
        'x-service-event': job.eventType,
      };
      if (target.secret) headers['x-service-signature'] = sign(target.secret, job.bytes);
      status = await this.send(target.url, headers, job.bytes, run.ac.signal);
    } catch (e) {
      error = tenantReason(e, timedOut, this.opts.timeoutMs);
      const detail = describe(e, timedOut, this.opts.timeoutMs);
      if (detail !== error) {
        const fields = { tenant_id: job.tenantId, webhook_id: job.webhookId, delivery_id: job.id, error, detail };
        if ((e as { code?: string })?.code === 'EPRIVATEADDR') log.warn('webhook destination refused', fields);
        else log.debug('webhook attempt failed', fields);
      }
    } finally {
      clearTimeout(timer);
    }
    const duration = Math.round((performance.now() - t0) * 10) / 10;
    this.running.delete(job.id);
    this.inFlight--;
    h.inFlight--;
    const left = (this.tenantInFlight.get(tenant) ?? 1) - 1;
    if (left > 0) this.tenantInFlight.set(tenant, left);
    else this.tenantInFlight.delete(tenant);
    if (!run.interrupted) this.report(h, job, { attempt: job.attemptsMade + 1, started_at: startedAt.toISOString(), duration_ms: duration, status_code: status, error });
    this.release(h);
    this.pump();
    this.checkStopped();
  }

  private report(h: Hook, job: Job, attempt: AttemptReport): void {
    job.attemptsMade++;
    const ok = attempt.status_code !== null && attempt.status_code >= 200 && attempt.status_code < 300;
    if (ok && attempt.error === null) {
      this.post({ type: 'attempt', id: job.id, tenantId: job.tenantId, webhookId: job.webhookId, attempt, next: 'delivered', retryInMs: null });
      return;
    }
    if (attempt.error === null) attempt.error = `HTTP ${attempt.status_code}`;
    if (job.attemptsMade >= job.maxAttempts) {
      this.post({ type: 'attempt', id: job.id, tenantId: job.tenantId, webhookId: job.webhookId, attempt, next: 'failed', retryInMs: null });
      return;
    }
    const b = this.opts.backoffMs;
    const wait = b.length === 0 ? 0 : b[Math.min(job.attemptsMade - 1, b.length - 1)];
    this.post({ type: 'attempt', id: job.id, tenantId: job.tenantId, webhookId: job.webhookId, attempt, next: 'retry', retryInMs: wait });
    // When stopping, the retry is not scheduled: the delivery stays pending and resumes at the next start.
    if (this.stopping) return;
    h.waiting++;
    const timer = setTimeout(() => {
      this.timers.delete(job.id);
      h.waiting--;
      if (this.hooks.get(job.key) !== h) return; // cancelled meanwhile
      h.queue.push(job);
      this.pump();
    }, wait);
    this.timers.set(job.id, { timer, job });
  }

  /** Forget an idle webhook (its secret with it). */
  private release(h: Hook): void {
    if (h.queue.length === 0 && h.inFlight === 0 && h.waiting === 0) {
      const key = keyOf(h.target.tenantId, h.target.webhookId);
      if (this.hooks.get(key) === h) this.hooks.delete(key);
    }
  }

  private stop(graceMs: number): void {
    if (this.stopping) return;
    this.stopping = true;
    for (const t of this.timers.values()) clearTimeout(t.timer);
    this.timers.clear();
    for (const h of this.hooks.values()) {
      h.queue.length = 0;
      h.waiting = 0;
    }
    if (this.running.size > 0) {
      setTimeout(() => {
        for (const r of this.running.values()) {
          r.interrupted = true;
          r.ac.abort();
        }
      }, graceMs).unref();
    }
    this.checkStopped();
  }

  private checkStopped(): void {
    if (!this.stopping || this.stoppedSent || this.running.size > 0) return;
    this.stoppedSent = true;
    this.post({ type: 'stopped' });
    this.onStopped();
  }
}
