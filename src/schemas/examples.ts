/**
 * Realistic examples for the OpenAPI document, typed by their schemas (the compiler checks
 * them; test/unit/openapi-examples.test.ts checks that the server's validators accept every
 * request example). One scenario throughout: two processors onboarded for US/USD cards.
 */
import type { Static } from '@sinclair/typebox';
import type { Delivery, WebhookInput, WebhookOutput, WebhookPatch } from './webhooks.js';
import type { OnboardRequest, OnboardResponse } from './onboarding.js';
import type { RuleInput, RuleOutput } from './rules.js';
import type { OutcomeReport, RouteRequest } from './routing.js';

export const RULE_ID = 'us_usd_card';
export const WEBHOOK_ID = 'wh_5f0c6a2e9b1d4c7a8e3f2b10';
export const DELIVERY_ID = 'dlv_0mabc3d2e1f4ga1b2c3d4e5';
const AT = '2026-05-04T12:00:00.000Z';

export const routeRequest: RouteRequest = { country: 'US', currency: 'USD', payment_method: 'card', card_type: 'visa', amount: 120.5 };

export const outcomeReport: OutcomeReport = { rule_id: RULE_ID, processor_id: 'stripe_us', success: false, latency_ms: 840, error_code: 'processor_timeout' };

export const ruleInput: RuleInput = {
  rule_id: 'gb_gbp_card',
  attributes: ['GB', 'GBP', 'card'],
  primary_id: 'adyen_eu',
  primary_name: 'Adyen EU',
  secondary_id: 'stripe_eu',
  secondary_name: 'Stripe EU',
  primary_weight: 0.9,
};

export const rule: Static<typeof RuleOutput> = {
  rule_id: RULE_ID,
  attributes: ['US', 'USD', 'card', '*', '*', '*'],
  primary: { processor_id: 'stripe_us', name: 'Stripe US' },
  secondary: { processor_id: 'adyen_us', name: 'Adyen US' },
  primary_weight: 0.9,
  secondary_weight: 0.1,
  created_at: AT,
};

export const onboardRequest: OnboardRequest = {
  processors: [
    { processor_id: 'stripe_us', name: 'Stripe US', countries: ['US'], currencies: ['USD'], payment_methods: ['card'], priority: 1 },
    { processor_id: 'adyen_us', name: 'Adyen US', countries: ['US'], currencies: ['USD'], payment_methods: ['card'], priority: 2 },
  ],
  primary_weight: 0.9,
};

export const onboardResponse: Static<typeof OnboardResponse> = {
  rules_created: 1,
  rules: [
    {
      rule_id: RULE_ID,
      attributes: ['US', 'USD', 'card', '*', '*', '*'],
      primary_id: 'stripe_us',
      primary_name: 'Stripe US',
      secondary_id: 'adyen_us',
      secondary_name: 'Adyen US',
      primary_weight: 0.9,
    },
  ],
  processors: ['stripe_us', 'adyen_us'],
};

export const processorHealth = (processor_id: string, name: string, failed: boolean) => ({
  processor_id,
  name,
  status: failed ? ('failed_over' as const) : ('healthy' as const),
  success_rate: failed ? 0.4 : 0.97,
  error_rate: failed ? 0.6 : 0.01,
  decline_rate: 0.02,
  avg_latency_ms: failed ? 2900 : 310,
  p95_latency_ms: failed ? 8000 : 640,
  p99_latency_ms: failed ? 9400 : 880,
  sample_count: failed ? 120 : 85,
  failure_probability: null,
  bandit_weight: null,
});

export const ruleHealth = {
  rule_id: RULE_ID,
  primary: processorHealth('stripe_us', 'Stripe US', true),
  secondary: processorHealth('adyen_us', 'Adyen US', false),
  decision: { processor_id: 'adyen_us', weight: 1, decision_source: 'rules', failure_probability: null },
};

export const failoverEvent = {
  event_id: '1777896000000-1',
  rule_id: RULE_ID,
  from_processor: 'stripe_us',
  to_processor: 'adyen_us',
  reason: '5 consecutive technical failures (error rate 100% over the run) reached the failover run length 5; failover threshold 30.0%',
  trigger_value: 1,
  threshold: 0.3,
  timestamp: AT,
};

export const webhookInput: WebhookInput = {
  url: 'https://ops.example.com/hooks/routing',
  event_types: ['failover.triggered', 'failover.recovered'],
  secret: 'whsec_3f9a1c7e5b',
  active: true,
};

export const webhookPatch: WebhookPatch = { active: false };

export const webhook: Static<typeof WebhookOutput> = {
  id: WEBHOOK_ID,
  url: 'https://ops.example.com/hooks/routing',
  event_types: ['failover.triggered', 'failover.recovered'],
  active: true,
  has_secret: true,
  created_at: AT,
  updated_at: AT,
};

export const delivery: Static<typeof Delivery> = {
  id: DELIVERY_ID,
  webhook_id: WEBHOOK_ID,
  event_id: 'evt_9c2e4f1a7b3d5e6f8a0b1c2d',
  event_type: 'failover.triggered',
  status: 'delivered',
  series: 1,
  created_at: AT,
  updated_at: AT,
  next_attempt_at: null,
  attempts: [{ series: 1, attempt: 1, started_at: AT, duration_ms: 42, status_code: 200, error: null }],
  payload: { event_id: 'evt_9c2e4f1a7b3d5e6f8a0b1c2d', event_type: 'failover.triggered', timestamp: AT, data: { rule_id: RULE_ID, from_processor: 'stripe_us', to_processor: 'adyen_us' } },
};
