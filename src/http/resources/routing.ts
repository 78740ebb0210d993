/** POST /v1/route and POST /v1/outcome: the hot path (spec 2.1-2.3, 4.1). */
import { tenantOf, type AppContext } from '../../app-context.js';
import { errors } from '../../errors.js';
import { decide, matchRule } from '../../routing/decide.js';
import { CLASSIFICATION_NAMES, recordReportedOutcome } from '../../routing/outcome.js';
import { compile, ErrorSchema } from '../../schemas/common.js';
import { OutcomeAccepted, OutcomeReport, RouteDecision, RouteRequest } from '../../schemas/routing.js';
import type { ShadowObserver } from '../../shadow/shadow-service.js';
import { endpoint, type Endpoint } from '../endpoint.js';
import { classifyOutcome } from '../../engine/classify.js';
import type { Tenant } from '../../tenants/tenant.js';

const routeRequest = compile(RouteRequest);

/** A repeated outcome of one transaction_id: acknowledged, not counted again (nothing recorded). */
function duplicateOutcome(tenant: Tenant, body: OutcomeReport) {
  const kind = classifyOutcome(body.success, body.error_code, tenant.errorCodes);
  return { status: 202, body: { status: 'accepted', classification: CLASSIFICATION_NAMES[kind], duplicate: true } };
}
const outcomeReport = compile(OutcomeReport);

/** `shadow` observes routes and outcomes of tenants in shadow mode (counter increments only). */
export function routingEndpoints(app: AppContext, shadow: ShadowObserver | null = null): Endpoint[] {
  return [
    endpoint({
      method: 'POST',
      path: '/v1/route',
      auth: true,
      body: routeRequest,
      handler: (ctx, body) => {
        const tenant = tenantOf(app, ctx);
        const rule = matchRule(tenant, body);
        if (!rule) throw errors.noMatch();
        const decision = decide(app.tables, rule, Math.random());
        if (body.transaction_id !== undefined) app.decisions.routed(tenant, rule, body.transaction_id, decision, Date.now());
        tenant.counters.routed++;
        app.metrics.counts.routed++;
        if (shadow !== null && tenant.settings.shadowMode) shadow.routed(tenant, Date.now());
        return { status: 200, body: decision };
      },
      doc: {
        summary: 'Choose the processor for a payment',
        tag: 'Routing',
        description:
          'Matches the most specific rule and picks a processor by its current weights. Also returns `rule_id` to report back with the outcome.',
        responses: {
          200: { description: 'the routing decision', schema: RouteDecision },
          404: { description: 'no rule matches', schema: ErrorSchema },
          422: { description: 'invalid fields', schema: ErrorSchema },
        },
      },
    }),
    endpoint({
      method: 'POST',
      path: '/v1/outcome',
      auth: true,
      body: outcomeReport,
      handler: (ctx, body) => {
        const tenant = tenantOf(app, ctx);
        const txId = body.transaction_id;
        if (txId !== undefined && app.decisions.isDuplicateOutcome(tenant, txId)) return duplicateOutcome(tenant, body);
        const now = Date.now();
        const recorded = recordReportedOutcome(app.tables, tenant, body, now);
        if (txId !== undefined) app.decisions.reported(tenant, body, recorded.kind, now);
        tenant.counters.reported++;
        app.metrics.counts.reported++;
        // Before the engine hook: the status and recommendation are those the client faced.
        if (shadow !== null && tenant.settings.shadowMode) shadow.outcome(tenant, recorded, body.processor_id, now);
        app.engine.outcomeRecorded(tenant, recorded, now);
        return { status: 202, body: { status: 'accepted', classification: CLASSIFICATION_NAMES[recorded.kind] } };
      },
      doc: {
        summary: 'Report how a payment went',
        tag: 'Routing',
        description:
          'Failed outcomes are classified by error_code: issuer declines count against the success rate only; technical errors (timeouts, 5xx, network, no code) count as processor errors.',
        responses: {
          202: { description: 'recorded', schema: OutcomeAccepted },
          422: { description: 'invalid fields, unknown rule_id, or processor not in the rule', schema: ErrorSchema },
        },
      },
    }),
  ];
}
