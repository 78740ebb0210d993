/** /v1/webhooks: registration per tenant, and the deliveries of each webhook (spec 2.12, 4.6, 6). */
import { errors, ServiceError } from '../../errors.js';
import { compile, ErrorSchema, type Validator } from '../../schemas/common.js';
import { Delivery, DELIVERY_STATUSES, DeliveryList, WebhookDeleted, WebhookInput, WebhookList, WebhookOutput, WebhookPatch, type DeliveryStatus } from '../../schemas/webhooks.js';
import { MAX_DELIVERIES_PER_WEBHOOK, type DeliveryQuery } from '../../webhooks/deliveries.js';
import type { WebhookDispatcher } from '../../webhooks/dispatcher.js';
import { MAX_WEBHOOKS_PER_TENANT } from '../../webhooks/registry.js';
import { DELIVERY_ID_RE, EVENT_TYPES, WEBHOOK_ID_RE } from '../../webhooks/events.js';
import { deliveryOutput, webhookOutput } from '../../webhooks/records.js';
import { endpoint, jsonBody, type Ctx, type Endpoint } from '../endpoint.js';
import { delivery, DELIVERY_ID, webhook, WEBHOOK_ID, webhookInput as webhookInputExample, webhookPatch as webhookPatchExample } from '../../schemas/examples.js';
import type { AuditTrail } from '../../audit/audit-trail.js';

/** The compiled validator, with clearer messages for the two generic ones TypeBox gives here. */
function friendly<T>(v: Validator<T>): Validator<T> {
  return {
    schema: v.schema,
    parse(value: unknown): T {
      try {
        return v.parse(value);
      } catch (e) {
        if (!(e instanceof ServiceError) || !e.fields) throw e;
        throw errors.validation(
          e.fields.map((f) =>
            /^event_types\[\d+\]$/.test(f.field)
              ? { field: f.field, message: `must be one of ${EVENT_TYPES.join(', ')}` }
              : f.field === 'body' && /at least 1 properties/.test(f.message)
                ? { field: 'body', message: 'give at least one of url, event_types, secret, active' }
                : f,
          ),
        );
      }
    },
  };
}

const webhookInput = friendly(compile(WebhookInput));
const webhookPatch = friendly(compile(WebhookPatch));

export const DEFAULT_DELIVERY_LIMIT = 20;
export const MAX_DELIVERY_LIMIT = 100;

/** An id that cannot exist is simply not found (no format lecture: ids are opaque). */
function webhookId(ctx: Ctx): string {
  const id = ctx.params.webhook_id;
  if (!WEBHOOK_ID_RE.test(id)) throw errors.webhookNotFound(id.slice(0, 64));
  return id;
}

function deliveryId(ctx: Ctx): string {
  const id = ctx.params.delivery_id;
  if (!DELIVERY_ID_RE.test(id)) throw errors.deliveryNotFound(id.slice(0, 64));
  return id;
}

function deliveryQuery(ctx: Ctx): DeliveryQuery {
  const q = ctx.query;
  let limit = DEFAULT_DELIVERY_LIMIT;
  const rawLimit = q.get('limit');
  if (rawLimit !== null) {
    if (!/^\d{1,4}$/.test(rawLimit) || Number(rawLimit) < 1 || Number(rawLimit) > MAX_DELIVERY_LIMIT) {
      throw errors.field('limit', `must be an integer from 1 to ${MAX_DELIVERY_LIMIT}`);
    }
    limit = Number(rawLimit);
  }
  const status = q.get('status');
  if (status !== null && !DELIVERY_STATUSES.includes(status as DeliveryStatus)) {
    throw errors.field('status', `must be one of ${DELIVERY_STATUSES.join(', ')}`);
  }
  const before = q.get('before');
  if (before !== null && !DELIVERY_ID_RE.test(before)) throw errors.field('before', 'must be a delivery id');
  return { limit, status: (status as DeliveryStatus | null) ?? undefined, before: before ?? undefined };
}

const notFound = { description: 'no such webhook for this tenant (WEBHOOK_NOT_FOUND)', schema: ErrorSchema, error: 'WEBHOOK_NOT_FOUND' as const };
const webhookPath = { webhook_id: WEBHOOK_ID };
const deliveryPath = { webhook_id: WEBHOOK_ID, delivery_id: DELIVERY_ID };

export function webhookEndpoints(webhooks: WebhookDispatcher, audit: AuditTrail): Endpoint[] {
  /** The caller's tenant: always the one its API key maps to. */
  const tenant = (ctx: Ctx) => ctx.grant.tenantId;
  return [
    endpoint({
      method: 'POST',
      path: '/v1/webhooks',
      auth: true,
      body: webhookInput,
      handler: async (ctx, body) => {
        const out = webhookOutput(await webhooks.create(tenant(ctx), body));
        await audit.record(ctx, { action: 'webhook.created', target_type: 'webhook', target_id: out.id, before: null, after: out });
        return { status: 201, body: out };
      },
      doc: {
        summary: 'Register a webhook',
        tag: 'Webhooks',
        operationId: 'createWebhook',
        requestExample: webhookInputExample,
        description:
          `Only \`url\` is required. \`event_types\` defaults to all four (failover.triggered, failover.recovered, processor.degraded, processor.healthy); ` +
          `\`secret\` (8-256 characters) makes every delivery carry \`X-Service-Signature: sha256=<hex HMAC-SHA256 of the raw body>\` and is never returned. ` +
          `At most ${MAX_WEBHOOKS_PER_TENANT} webhooks per tenant (422 LIMIT_EXCEEDED). Each delivery is a POST of \`{event_id, event_type, timestamp, data}\`, ` +
          'up to 3 attempts with 1 s and 2 s between them, 10 s timeout per attempt (SERVICE_WEBHOOK_TIMEOUT_MS, SERVICE_WEBHOOK_BACKOFF_MS); any 2xx is success, redirects are not followed.',
        responses: {
          201: jsonBody('the webhook (without its secret)', WebhookOutput, webhook),
          422: { description: 'an invalid field (named), a refused destination (`url`), or the per-tenant limit', schema: ErrorSchema, error: 'VALIDATION_FAILED' },
        },
      },
    }),
    endpoint({
      method: 'GET',
      path: '/v1/webhooks',
      auth: true,
      handler: (ctx) => {
        const list = webhooks.list(tenant(ctx)).map(webhookOutput);
        return { status: 200, body: { webhooks: list, total: list.length } };
      },
      doc: {
        summary: "List the tenant's webhooks",
        tag: 'Webhooks',
        operationId: 'listWebhooks',
        responses: { 200: jsonBody('in creation order', WebhookList, { webhooks: [webhook], total: 1 }) },
      },
    }),
    endpoint({
      method: 'GET',
      path: '/v1/webhooks/{webhook_id}',
      auth: true,
      handler: (ctx) => ({ status: 200, body: webhookOutput(webhooks.get(tenant(ctx), webhookId(ctx))) }),
      doc: {
        summary: 'One webhook',
        tag: 'Webhooks',
        operationId: 'getWebhook',
        pathExamples: webhookPath,
        responses: { 200: jsonBody('the webhook', WebhookOutput, webhook), 404: notFound },
      },
    }),
    endpoint({
      method: 'PATCH',
      path: '/v1/webhooks/{webhook_id}',
      auth: true,
      body: webhookPatch,
      handler: async (ctx, body) => {
        const id = webhookId(ctx);
        const before = webhookOutput(webhooks.get(tenant(ctx), id));
        const out = webhookOutput(await webhooks.update(tenant(ctx), id, body));
        await audit.record(ctx, { action: 'webhook.updated', target_type: 'webhook', target_id: id, before, after: out });
        return { status: 200, body: out };
      },
      doc: {
        summary: 'Pause, resume or change a webhook',
        tag: 'Webhooks',
        operationId: 'updateWebhook',
        pathExamples: webhookPath,
        requestExample: webhookPatchExample,
        description:
          '`active: false` pauses it: new events are not delivered to it (deliveries already pending still complete); `active: true` resumes. ' +
          '`url`, `event_types` and `secret` (null removes it) can be changed too; pending retries use the new url and secret.',
        responses: {
          200: jsonBody('the updated webhook', WebhookOutput, { ...webhook, active: false }),
          404: notFound,
          422: { description: 'an invalid field (named)', schema: ErrorSchema, error: 'VALIDATION_FAILED' },
        },
      },
    }),
    endpoint({
      method: 'DELETE',
      path: '/v1/webhooks/{webhook_id}',
      auth: true,
      handler: async (ctx) => {
        const id = webhookId(ctx);
        const before = webhookOutput(webhooks.get(tenant(ctx), id));
        await webhooks.remove(tenant(ctx), id);
        await audit.record(ctx, { action: 'webhook.deleted', target_type: 'webhook', target_id: id, before, after: null });
        return { status: 200, body: { deleted: id } };
      },
      doc: {
        summary: 'Delete a webhook',
        tag: 'Webhooks',
        operationId: 'deleteWebhook',
        pathExamples: webhookPath,
        description: 'Also deletes its delivery history; pending deliveries are dropped and requests in flight aborted. Answers `{deleted: <id>}`.',
        responses: { 200: jsonBody('deleted', WebhookDeleted, { deleted: WEBHOOK_ID }), 404: notFound },
      },
    }),
    endpoint({
      method: 'GET',
      path: '/v1/webhooks/{webhook_id}/deliveries',
      auth: true,
      handler: (ctx) => {
        const q = deliveryQuery(ctx);
        const id = webhookId(ctx);
        const r = webhooks.listDeliveries(tenant(ctx), id, q);
        const last = r.deliveries[r.deliveries.length - 1]?.id;
        const next =
          r.deliveries.length === q.limit && last
            ? { Link: `</v1/webhooks/${encodeURIComponent(id)}/deliveries?limit=${q.limit}${q.status ? `&status=${q.status}` : ''}&before=${encodeURIComponent(last)}>; rel="next"` }
            : undefined;
        return { status: 200, body: { deliveries: r.deliveries.map(deliveryOutput), total: r.total }, headers: next };
      },
      doc: {
        summary: "A webhook's deliveries, newest first",
        tag: 'Webhooks',
        operationId: 'listDeliveries',
        pathExamples: webhookPath,
        description: `Each with its attempts. The newest ${MAX_DELIVERIES_PER_WEBHOOK} deliveries per webhook are kept; older finished ones are pruned.`,
        query: [
          { name: 'limit', description: `1-${MAX_DELIVERY_LIMIT}, default ${DEFAULT_DELIVERY_LIMIT}`, schema: { type: 'integer', minimum: 1, maximum: MAX_DELIVERY_LIMIT, default: DEFAULT_DELIVERY_LIMIT } },
          { name: 'status', description: 'only pending, delivered or failed ones', schema: { type: 'string', enum: [...DELIVERY_STATUSES] } },
          { name: 'before', description: 'only deliveries older than this delivery id (next page: the last id of this one)', schema: { type: 'string' } },
        ],
        responses: {
          200: jsonBody('the deliveries', DeliveryList, { deliveries: [delivery], total: 1 }),
          404: notFound,
          422: { description: 'an invalid query parameter (named)', schema: ErrorSchema, error: 'VALIDATION_FAILED' },
        },
      },
    }),
    endpoint({
      method: 'GET',
      path: '/v1/webhooks/{webhook_id}/deliveries/{delivery_id}',
      auth: true,
      handler: (ctx) => ({ status: 200, body: deliveryOutput(webhooks.getDelivery(tenant(ctx), webhookId(ctx), deliveryId(ctx))) }),
      doc: {
        summary: 'One delivery with its attempts',
        tag: 'Webhooks',
        operationId: 'getDelivery',
        pathExamples: deliveryPath,
        responses: {
          200: jsonBody('the delivery', Delivery, delivery),
          404: { description: 'no such webhook or delivery (WEBHOOK_NOT_FOUND, DELIVERY_NOT_FOUND)', schema: ErrorSchema, error: 'DELIVERY_NOT_FOUND' },
        },
      },
    }),
    endpoint({
      method: 'POST',
      path: '/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver',
      auth: true,
      handler: async (ctx) => {
        const out = deliveryOutput(await webhooks.redeliver(tenant(ctx), webhookId(ctx), deliveryId(ctx)));
        await audit.record(ctx, { action: 'webhook.redelivered', target_type: 'webhook', target_id: webhookId(ctx), before: null, after: { delivery_id: deliveryId(ctx) } });
        return { status: 202, body: out };
      },
      doc: {
        summary: 'Send a delivered or failed delivery again',
        tag: 'Webhooks',
        operationId: 'redeliverDelivery',
        pathExamples: deliveryPath,
        description:
          'A new series of up to 3 attempts with the same delivery id and the same body bytes (receivers can de-duplicate on X-Service-Delivery or event_id). No request body.',
        responses: {
          202: jsonBody('accepted: the delivery, pending again', Delivery, {
            ...delivery,
            status: 'pending',
            series: 2,
            next_attempt_at: '2026-05-04T12:00:00.000Z',
          }),
          404: { description: 'no such webhook or delivery', schema: ErrorSchema, error: 'DELIVERY_NOT_FOUND' },
          409: { description: 'the delivery is still pending (DELIVERY_IN_PROGRESS)', schema: ErrorSchema, error: 'DELIVERY_IN_PROGRESS' },
        },
      },
    }),
  ];
}

