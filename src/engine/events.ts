/**
 * What a transition becomes outside the engine: a failover event for the audit trail
 * (spec 2.7) and the webhook payload data of its event (spec 6.3, data documented in the
 * README).
 */
import type { RuleRecord } from '../tenants/tenant.js';
import type { FailoverEventData, ProcessorEventData } from '../webhooks/events.js';
import type { Transition } from './transitions.js';

/** A failover event as the audit trail stores it: the webhook's failover data, with when it happened. */
export interface FailoverEventRecord extends FailoverEventData {
  timestamp: string; // ISO 8601, UTC
}

function processorIds(rule: RuleRecord, k: 0 | 1): [self: string, other: string] {
  return k === 0 ? [rule.primary_id, rule.secondary_id] : [rule.secondary_id, rule.primary_id];
}

export function failoverEventOf(rule: RuleRecord, t: Transition): FailoverEventRecord {
  const [self, other] = processorIds(rule, t.processor);
  return {
    rule_id: rule.rule_id,
    from_processor: self,
    to_processor: other,
    reason: t.reason,
    trigger_value: t.triggerValue,
    threshold: t.threshold,
    timestamp: new Date(t.atMs).toISOString(),
  };
}

/** Webhook `data` for each event type. */
export function eventData(rule: RuleRecord, t: Transition): FailoverEventData | ProcessorEventData {
  const [self, other] = processorIds(rule, t.processor);
  const common = { rule_id: rule.rule_id, reason: t.reason, trigger_value: t.triggerValue, threshold: t.threshold };
  switch (t.event) {
    case 'failover.triggered':
      return { ...common, from_processor: self, to_processor: other };
    case 'failover.recovered':
      return { ...common, from_processor: other, to_processor: self };
    default:
      return {
        ...common,
        processor_id: self,
        role: t.processor === 0 ? 'primary' : 'secondary',
        status: t.to,
        previous_status: t.from,
      };
  }
}
