/** Messages between the front thread (delivery-thread.ts) and the delivery thread (delivery-worker.ts, sender.ts). */
import type { DeliveryAttempt } from '../schemas/webhooks.js';

export interface DeliveryWorkerOptions {
  /** Per attempt: connect, response headers, body, and the attempt as a whole. */
  timeoutMs: number;
  /** Wait after the n-th failed attempt: backoffMs[n-1] (the last value repeats). */
  backoffMs: number[];
  allowPrivate: boolean;
  /** For the User-Agent header. */
  version: string;
  /** Requests in flight at once, over all webhooks. */
  maxConcurrency: number;
  /** Requests in flight at once to one webhook, so a slow receiver cannot take every slot. */
  maxPerWebhook: number;
  /** Requests in flight per tenant, all its webhooks together: one tenant's dead receivers cannot take every slot. */
  maxPerTenant: number;
}

/** One delivery handed to the thread: everything it needs to send it, including the secret. */
export interface DeliveryJob {
  id: string;
  tenantId: string;
  webhookId: string;
  eventType: string;
  /** The exact JSON bytes to send and sign. */
  body: string;
  /** Attempts already made in the current series (a resumed delivery continues its series). */
  attemptsMade: number;
  maxAttempts: number;
}

export interface WebhookTarget {
  tenantId: string;
  webhookId: string;
  url: string;
  secret: string | null;
}

export type ToWorker =
  | { type: 'deliver'; target: WebhookTarget; job: DeliveryJob }
  /** The webhook's url or secret changed: queued and retried jobs use the new ones. */
  | { type: 'target'; target: WebhookTarget }
  /** The webhook was deleted: drop its queued jobs, abort its requests, report nothing more. */
  | { type: 'cancel'; tenantId: string; webhookId: string }
  /** The front thread dropped this pending delivery (backlog cap): forget it if not yet sent. */
  | { type: 'drop'; tenantId: string; webhookId: string; id: string }
  /** Start nothing new; let requests in flight finish for up to graceMs, then abort them. */
  | { type: 'stop'; graceMs: number };

/** One attempt as the front thread records it and the API shows it, less the series (which only the front thread knows). */
export type AttemptReport = Omit<DeliveryAttempt, 'series'>;

export type FromWorker =
  | {
      type: 'attempt';
      id: string;
      tenantId: string;
      webhookId: string;
      attempt: AttemptReport;
      /** What happens next: delivered and failed are final. */
      next: 'delivered' | 'failed' | 'retry';
      retryInMs: number | null;
    }
  /** Every request has finished or been aborted; nothing more will be reported. */
  | { type: 'stopped' };

export const WEBHOOK_MAX_ATTEMPTS = 3;
