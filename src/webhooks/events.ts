/**
 * Webhook event types, the `data` each one carries, and the payload envelope (spec 6.1, 6.3).
 * The payload is serialized once, when the event is published: the same bytes are stored,
 * signed and sent on every attempt and redelivery, so a signature always matches the body.
 */
import { randomBytes } from 'node:crypto';
import type { StatusName } from '../shm/layout.js';
import { TRANSITION_EVENTS, type TransitionEvent } from '../tiers/tier1/events.js';

/** A webhook event type is one of Tier 1's transition events (their wire names, in the order the API lists them). */
export const EVENT_TYPES = TRANSITION_EVENTS;
export type EventType = TransitionEvent;

export function isEventType(v: unknown): v is EventType {
  return typeof v === 'string' && (EVENT_TYPES as readonly string[]).includes(v);
}

/** `failover.triggered` (primary → secondary) and `failover.recovered` (secondary → primary). */
export interface FailoverEventData {
  rule_id: string;
  /** The processor traffic moves away from. */
  from_processor: string;
  /** The processor traffic moves to. */
  to_processor: string;
  /** Human readable, including the observed value and the threshold. */
  reason: string;
  /** The observed value that caused the move (a rate 0..1, a run length, or a latency in ms). */
  trigger_value: number;
  /** The threshold it was compared with, in the same unit. */
  threshold: number;
}

/** `processor.degraded` and `processor.healthy`. */
export interface ProcessorEventData {
  rule_id: string;
  processor_id: string;
  role: 'primary' | 'secondary';
  /** The status the processor moved to. */
  status: StatusName;
  /** The status it moved from. */
  previous_status: StatusName;
  reason: string;
  trigger_value: number;
  threshold: number;
}

export interface EventDataMap {
  'failover.triggered': FailoverEventData;
  'failover.recovered': FailoverEventData;
  'processor.degraded': ProcessorEventData;
  'processor.healthy': ProcessorEventData;
}

export interface EventPayload<E extends EventType = EventType> {
  event_id: string;
  event_type: E;
  /** ISO 8601, UTC (`Z`). */
  timestamp: string;
  data: EventDataMap[E];
}

function randomHex(bytes: number): string {
  return randomBytes(bytes).toString('hex');
}

/** `wh_` + 24 hex digits (96 random bits). */
export function newWebhookId(): string {
  return `wh_${randomHex(12)}`;
}
export const WEBHOOK_ID_RE = /^wh_[0-9a-f]{24}$/;

/** `evt_` + 24 hex digits (96 random bits). */
export function newEventId(): string {
  return `evt_${randomHex(12)}`;
}

let deliverySeq = 0;
/**
 * `dlv_` + creation time (base 36, fixed width) + a sequence + random bits. Ids sort by
 * creation time, so the store's key order is the delivery order (newest = last).
 */
export function newDeliveryId(nowMs = Date.now()): string {
  const t = Math.max(0, Math.floor(nowMs)).toString(36).padStart(9, '0');
  const s = (deliverySeq++ % 36 ** 4).toString(36).padStart(4, '0');
  return `dlv_${t}${s}${randomHex(5)}`;
}
export const DELIVERY_ID_RE = /^dlv_[0-9a-z]{13}[0-9a-f]{10}$/;

/** The envelope of spec 6.3, serialized: `{event_id, event_type, timestamp, data}`. */
export function buildPayload<E extends EventType>(eventType: E, data: EventDataMap[E], atMs: number = Date.now()): { eventId: string; body: string } {
  const eventId = newEventId();
  const ms = Number.isFinite(atMs) ? atMs : Date.now();
  const body = JSON.stringify({ event_id: eventId, event_type: eventType, timestamp: new Date(ms).toISOString(), data });
  return { eventId, body };
}
