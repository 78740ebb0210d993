/** Webhooks and their deliveries (spec 2.12, 4.6, 6). */
import { Type, type Static } from '@sinclair/typebox';
import { EVENT_TYPES } from '../webhooks/events.js';
import { MAX_URL_LENGTH } from '../webhooks/address.js';

export const MIN_SECRET_LENGTH = 8;
export const MAX_SECRET_LENGTH = 256;

const EventTypeSchema = Type.Union(
  EVENT_TYPES.map((e) => Type.Literal(e)),
  { description: 'failover.triggered | failover.recovered | processor.degraded | processor.healthy' },
);

const Url = Type.String({
  minLength: 1,
  maxLength: MAX_URL_LENGTH,
  description:
    'absolute http(s) URL, at most 2048 characters, no user:password; loopback, private, shared (100.64/10), link-local, unspecified and metadata destinations are refused unless SERVICE_WEBHOOK_ALLOW_PRIVATE is set (checked on the literal host here and on the resolved address at each delivery)',
});

const EventTypes = Type.Array(EventTypeSchema, {
  minItems: 1,
  uniqueItems: true,
  description: 'non-empty, no duplicates; all four event types when omitted at creation',
});

const Secret = Type.String({
  minLength: MIN_SECRET_LENGTH,
  maxLength: MAX_SECRET_LENGTH,
  description: 'signs deliveries (X-Service-Signature: sha256=<hex HMAC-SHA256 of the body>); 8-256 characters; never returned',
});

export const WebhookInput = Type.Object(
  {
    url: Url,
    event_types: Type.Optional(EventTypes),
    secret: Type.Optional(Secret),
    active: Type.Optional(Type.Boolean({ default: true, description: 'false registers it paused; default true' })),
  },
  { $id: 'WebhookInput', additionalProperties: false },
);
export type WebhookInput = Static<typeof WebhookInput>;

export const WebhookPatch = Type.Object(
  {
    url: Type.Optional(Url),
    event_types: Type.Optional(EventTypes),
    secret: Type.Optional(Type.Union([Secret, Type.Null()], { description: 'a new secret, or null to stop signing' })),
    active: Type.Optional(Type.Boolean({ description: 'false pauses (no new deliveries), true resumes' })),
  },
  { $id: 'WebhookPatch', additionalProperties: false, minProperties: 1 },
);
export type WebhookPatch = Static<typeof WebhookPatch>;

export const WebhookOutput = Type.Object(
  {
    id: Type.String({ description: '`wh_` + 24 hex digits' }),
    url: Type.String(),
    event_types: Type.Array(Type.String()),
    active: Type.Boolean(),
    has_secret: Type.Boolean({ description: 'whether deliveries are signed (the secret itself is never returned)' }),
    created_at: Type.String({ description: 'ISO 8601, UTC' }),
    updated_at: Type.String({ description: 'ISO 8601, UTC' }),
  },
  { $id: 'Webhook' },
);

export const WebhookList = Type.Object(
  {
    webhooks: Type.Array(WebhookOutput, { description: 'in creation order' }),
    total: Type.Integer(),
  },
  { $id: 'WebhookList' },
);

export const WebhookDeleted = Type.Object({ deleted: Type.String({ description: 'the webhook id' }) }, { $id: 'WebhookDeleted' });

/** Where a delivery stands: pending until delivered, or failed once every attempt of its series failed (or it was dropped). */
export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;
export const DeliveryStatus = Type.Union(DELIVERY_STATUSES.map((s) => Type.Literal(s)));
export type DeliveryStatus = Static<typeof DeliveryStatus>;

export const DeliveryAttempt = Type.Object(
  {
    series: Type.Integer({ description: '1 for the original series, +1 per redelivery' }),
    attempt: Type.Integer({ description: '1-3 within the series' }),
    started_at: Type.String({ description: 'ISO 8601, UTC' }),
    duration_ms: Type.Number(),
    status_code: Type.Union([Type.Integer(), Type.Null()], { description: 'null when no response was received' }),
    error: Type.Union([Type.String(), Type.Null()], { description: 'null on a 2xx; else `HTTP <code>`, a timeout or a network error' }),
  },
  { $id: 'DeliveryAttempt' },
);
export type DeliveryAttempt = Static<typeof DeliveryAttempt>;

export const Delivery = Type.Object(
  {
    id: Type.String({ description: '`dlv_` + time-ordered suffix; also sent as X-Service-Delivery' }),
    webhook_id: Type.String(),
    event_id: Type.String(),
    event_type: Type.String(),
    status: DeliveryStatus,
    series: Type.Integer({ description: 'current attempt series (1 + number of redeliveries)' }),
    created_at: Type.String(),
    updated_at: Type.String(),
    next_attempt_at: Type.Union([Type.String(), Type.Null()], { description: 'when the next attempt is due, while pending' }),
    attempts: Type.Array(DeliveryAttempt, { description: 'oldest first (the newest 100 are kept)' }),
    payload: Type.Unknown({ description: 'the event as sent: {event_id, event_type, timestamp, data}' }),
  },
  { $id: 'Delivery' },
);

export const DeliveryList = Type.Object(
  {
    deliveries: Type.Array(Delivery, { description: 'newest first' }),
    total: Type.Integer({ description: 'stored deliveries of this webhook matching `status`' }),
  },
  { $id: 'DeliveryList' },
);
