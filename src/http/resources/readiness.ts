/** GET /ready: readiness, apart from liveness (GET /). Public, like liveness and metrics. */
import { Type } from '@sinclair/typebox';
import type { Readiness } from '../../readiness.js';
import { Nullable } from '../../schemas/common.js';
import { endpoint, jsonBody, type Endpoint } from '../endpoint.js';

const Check = Type.Object(
  { ok: Type.Boolean(), message: Type.Optional(Type.String({ description: 'why it is not ready; absent when ok' })) },
  { $id: 'ReadinessCheck' },
);

export const ReadinessSchema = Type.Object(
  {
    status: Type.Union([Type.Literal('ready'), Type.Literal('not_ready')]),
    not_ready: Type.Array(Type.String(), { description: 'the failing checks: store, worker_pool, evaluation' }),
    checks: Type.Object({
      store: Check,
      worker_pool: Check,
      evaluation: Type.Object({
        ok: Type.Boolean(),
        message: Type.Optional(Type.String()),
        last_cycle_age_ms: Nullable(Type.Number({ description: 'since the last evaluation cycle finished; null before the first' })),
      }),
    }),
  },
  { $id: 'Readiness' },
);

const ready: Readiness = {
  status: 'ready',
  not_ready: [],
  checks: { store: { ok: true }, worker_pool: { ok: true }, evaluation: { ok: true, last_cycle_age_ms: 1830 } },
};

export function readinessEndpoints(check: () => Promise<Readiness>): Endpoint[] {
  return [
    endpoint({
      method: 'GET',
      path: '/ready',
      auth: false,
      handler: async () => {
        const r = await check();
        return { status: r.status === 'ready' ? 200 : 503, body: r, headers: { 'Cache-Control': 'no-store' } };
      },
      doc: {
        summary: 'Readiness: may this instance take traffic?',
        tag: 'Service',
        operationId: 'getReadiness',
        description:
          'Ready when the store takes a write, the worker pool answers a task, and an evaluation cycle finished within the last 3 intervals ' +
          '(SERVICE_EVAL_INTERVAL_MS). Otherwise 503 with the failing checks named in `not_ready`. Each check is bounded (2 s).',
        responses: {
          200: jsonBody('ready', ReadinessSchema, ready),
          503: jsonBody('not ready; `not_ready` names what', ReadinessSchema, {
            status: 'not_ready',
            not_ready: ['worker_pool'],
            checks: { ...ready.checks, worker_pool: { ok: false, message: 'the worker pool does not answer: the worker pool did not answer within 2000 ms' } },
          }),
        },
      },
    }),
  ];
}
