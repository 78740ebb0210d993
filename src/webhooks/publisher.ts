/**
 * Events → deliveries: what the engine calls when a processor's health changes. Builds the
 * payload once, records one pending delivery per active subscribed webhook and hands each to
 * the delivery thread once it is stored. Reads only memory and never waits.
 */
import { log } from '../log.js';
import type { DeliveryRecords } from './deliveries.js';
import type { DeliveryThread } from './delivery-thread.js';
import { buildPayload, isEventType, type EventDataMap, type EventType } from './events.js';
import type { WebhookRegistry } from './registry.js';

export class Publisher {
  constructor(
    private readonly registry: WebhookRegistry,
    private readonly deliveries: DeliveryRecords,
    private readonly thread: DeliveryThread,
  ) {}

  /**
   * Announces an event to the tenant's active webhooks subscribed to its type. Never throws
   * and never waits: the payload is built and the deliveries are recorded (pending) and handed
   * to the delivery thread in the background. Returns the event id, or null when the event was
   * dropped (unknown type, unserializable data, webhooks not running).
   */
  publish<E extends EventType>(tenantId: string, eventType: E, data: EventDataMap[E], atMs?: number): string | null {
    try {
      if (!isEventType(eventType)) {
        log.warn('webhook event dropped: unknown event type', { event_type: String(eventType) });
        return null;
      }
      if (!this.thread.running) {
        log.warn('webhook event dropped: webhooks are not running', { tenant_id: tenantId, event_type: eventType });
        return null;
      }
      const { eventId, body } = buildPayload(eventType, data, atMs ?? Date.now());
      const hooks = this.registry.subscribers(tenantId, eventType);
      if (hooks.length === 0) return eventId;
      this.deliveries.create(
        tenantId,
        hooks.map((h) => h.id),
        { eventId, eventType, body },
        (rec) => {
          const hook = this.registry.find(tenantId, rec.webhook_id);
          if (hook && this.thread.running) this.thread.deliver(tenantId, hook, rec);
        },
      );
      return eventId;
    } catch (e) {
      log.error('webhook publish failed', { tenant_id: tenantId, event_type: String(eventType), err: String((e as Error)?.message ?? e) });
      return null;
    }
  }
}
