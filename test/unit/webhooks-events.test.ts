import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { buildPayload, DELIVERY_ID_RE, newDeliveryId, newWebhookId, WEBHOOK_ID_RE } from '../../src/webhooks/events.js';
import { sign, verify } from '../../src/webhooks/signature.js';

describe('payload', () => {
  it('is {event_id, event_type, timestamp, data} in that order, with an evt_ id and an ISO UTC time', () => {
    const data = { rule_id: 'r1', from_processor: 'a', to_processor: 'b', reason: 'error rate 40% > 30%', trigger_value: 0.4, threshold: 0.3 };
    const { eventId, body } = buildPayload('failover.triggered', data, Date.UTC(2025, 2, 1, 12, 0, 5));
    expect(eventId).toMatch(/^evt_[0-9a-f]{24}$/);
    expect(Object.keys(JSON.parse(body))).toEqual(['event_id', 'event_type', 'timestamp', 'data']);
    expect(JSON.parse(body)).toEqual({ event_id: eventId, event_type: 'failover.triggered', timestamp: '2025-03-01T12:00:05.000Z', data });
    expect(buildPayload('failover.triggered', data).eventId).not.toBe(eventId);
  });

  it('ids have their prefixes; delivery ids sort by creation time', () => {
    expect(newWebhookId()).toMatch(WEBHOOK_ID_RE);
    const ids = [newDeliveryId(1_000), newDeliveryId(1_000), newDeliveryId(2_000), newDeliveryId(Date.now())];
    for (const id of ids) expect(id).toMatch(DELIVERY_ID_RE);
    expect([...ids].sort()).toEqual(ids);
  });
});

describe('signature', () => {
  it('is sha256=<lowercase hex HMAC-SHA256(secret, body)> and verifies in constant time', () => {
    const body = Buffer.from('{"a":"é"}', 'utf8');
    const expected = `sha256=${createHmac('sha256', 's3cret-key').update(body).digest('hex')}`;
    expect(sign('s3cret-key', body)).toBe(expected);
    expect(sign('s3cret-key', body)).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(verify('s3cret-key', body, expected)).toBe(true);
    expect(verify('other-key', body, expected)).toBe(false);
    expect(verify('s3cret-key', Buffer.from('{"a":"e"}'), expected)).toBe(false);
    expect(verify('s3cret-key', body, undefined)).toBe(false);
    expect(verify('s3cret-key', body, 'sha256=00')).toBe(false);
  });
});
