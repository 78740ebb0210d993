/** What is stored for webhooks and deliveries, and how the API shows it (the schemas in src/schemas/webhooks.ts). */
import type { Static } from '@sinclair/typebox';
import type { Delivery, DeliveryAttempt, DeliveryStatus, WebhookOutput } from '../schemas/webhooks.js';
import type { EventType } from './events.js';

export interface WebhookRecord {
  id: string;
  url: string;
  event_types: EventType[];
  active: boolean;
  /** Stored as given (it is needed to sign); never returned by the API, never logged. */
  secret: string | null;
  created_at: string;
  updated_at: string;
}

/**
 * The key range of one webhook's deliveries in `webhook_deliveries`: delivery ids sort by
 * creation time, so the range is in creation order (newest = last).
 */
export const deliveryScope = (tenantId: string, webhookId: string) => `${tenantId}/${webhookId}`;

export interface DeliveryRecord {
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: EventType;
  status: DeliveryStatus;
  series: number;
  /** The exact JSON bytes sent (and signed) on every attempt. */
  body: string;
  created_at: string;
  updated_at: string;
  /** When the next attempt is due, while a retry is scheduled. */
  next_attempt_at: string | null;
  /** Oldest first; `series` is 1 for the original series, +1 per redelivery. */
  attempts: DeliveryAttempt[];
}

export function webhookOutput(r: WebhookRecord): Static<typeof WebhookOutput> {
  return {
    id: r.id,
    url: r.url,
    event_types: r.event_types,
    active: r.active,
    has_secret: r.secret !== null,
    created_at: r.created_at,
    updated_at: r.updated_at,
  };
}

export function deliveryOutput(r: DeliveryRecord): Static<typeof Delivery> {
  let payload: unknown = null;
  try {
    payload = JSON.parse(r.body);
  } catch {
    // stored bodies are always JSON; keep the listing alive regardless
  }
  return {
    id: r.id,
    webhook_id: r.webhook_id,
    event_id: r.event_id,
    event_type: r.event_type,
    status: r.status,
    series: r.series,
    created_at: r.created_at,
    updated_at: r.updated_at,
    next_attempt_at: r.next_attempt_at,
    attempts: r.attempts,
    payload,
  };
}

export function snapshot(r: DeliveryRecord): DeliveryRecord {
  return { ...r, attempts: r.attempts.map((a) => ({ ...a })) };
}
