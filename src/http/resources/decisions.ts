/** GET /v1/decisions/{transaction_id}: why a payment went where it went, and how it ended. */
import { Type } from '@sinclair/typebox';
import { tenantOf, type AppContext } from '../../app-context.js';
import { errors } from '../../errors.js';
import { ErrorSchema, Nullable } from '../../schemas/common.js';
import { ProcessorStatus } from '../../schemas/health.js';
import { endpoint, jsonBody, type Endpoint } from '../endpoint.js';
import { RULE_ID } from '../../schemas/examples.js';
import { checkPathId } from './rules.js';

const DecisionView = Type.Object(
  {
    transaction_id: Type.String(),
    decision: Type.Union(
      [Type.Object({
        rule_id: Type.String(),
        processor_id: Type.String(),
        fallback_processor_id: Type.String(),
        weight: Type.Number(),
        decision_source: Type.String(),
        failure_probability: Nullable(Type.Number()),
        processors: Type.Array(Type.Object({ processor_id: Type.String(), status: ProcessorStatus }), { description: 'the rule\'s processors and their status when the payment was routed' }),
        decided_at: Type.String({ description: 'ISO 8601, UTC' }),
      }), Type.Null()],
      { description: 'null when only an outcome was reported with this transaction_id' },
    ),
    outcome: Type.Union(
      [Type.Object({
        rule_id: Type.String(),
        processor_id: Type.String(),
        success: Type.Boolean(),
        latency_ms: Type.Number(),
        error_code: Nullable(Type.String()),
        classification: Type.String(),
        reported_at: Type.String({ description: 'ISO 8601, UTC' }),
      }), Type.Null()],
      { description: 'null until the outcome is reported (the first report counts)' },
    ),
  },
  { $id: 'DecisionLookup' },
);

export function decisionEndpoints(app: AppContext): Endpoint[] {
  return [
    endpoint({
      method: 'GET',
      path: '/v1/decisions/{transaction_id}',
      auth: true,
      handler: async (ctx) => {
        const id = checkPathId('transaction_id', ctx.params.transaction_id);
        const { decision, outcome } = await app.decisions.lookup(tenantOf(app, ctx), id);
        if (decision === undefined && outcome === undefined) throw errors.decisionNotFound(id);
        return { status: 200, body: { transaction_id: id, decision: decision ?? null, outcome: outcome ?? null } };
      },
      doc: {
        summary: 'The routing decision and outcome of one payment',
        tag: 'Routing',
        operationId: 'getDecision',
        description:
          'For routes and outcomes sent with `transaction_id`. Kept 24 h (on disk); 404 for an unknown id, another tenant\'s, or one older than that.',
        pathExamples: { transaction_id: 'pay_8f3a2c' },
        responses: {
          200: jsonBody('decision and outcome', DecisionView, {
            transaction_id: 'pay_8f3a2c',
            decision: {
              rule_id: RULE_ID,
              processor_id: 'stripe_us',
              fallback_processor_id: 'adyen_us',
              weight: 0.9,
              decision_source: 'rules',
              failure_probability: 0.0123,
              processors: [
                { processor_id: 'stripe_us', status: 'healthy' },
                { processor_id: 'adyen_us', status: 'healthy' },
              ],
              decided_at: '2026-05-04T12:00:00.000Z',
            },
            outcome: {
              rule_id: RULE_ID,
              processor_id: 'stripe_us',
              success: true,
              latency_ms: 182,
              error_code: null,
              classification: 'success',
              reported_at: '2026-05-04T12:00:01.200Z',
            },
          }),
          404: { description: 'no such transaction', schema: ErrorSchema, error: 'DECISION_NOT_FOUND' },
          422: { description: 'malformed id', schema: ErrorSchema, error: 'VALIDATION_FAILED' },
        },
      },
    }),
  ];
}
