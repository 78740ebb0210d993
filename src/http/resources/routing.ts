/** POST /v1/route and POST /v1/outcome: the hot path (spec 2.1-2.3, 4.1). */
import { tenantOf, type AppContext } from '../../app-context.js';
import { errors } from '../../errors.js';
import { matchRoute, pickedDecision, pickSide } from '../../routing/decide.js';
import { CLASSIFICATION_NAMES, recordReportedOutcome } from '../../routing/outcome.js';
import { compile, ErrorSchema } from '../../schemas/common.js';
import { OUTCOME_REPORT_FORM, plainOutcomeReport, plainRouteRequest, ROUTE_REQUEST_FORM } from '../../schemas/hot-bodies.js';
import { OutcomeAccepted, OutcomeReport, RouteDecision, RouteRequest } from '../../schemas/routing.js';
import type { ShadowObserver } from '../../shadow/shadow-service.js';
import { classifyOutcome } from '../../routing/classify.js';
import type { Tenant } from '../../tenants/tenant.js';
import { endpoint, jsonBody, type Endpoint } from '../endpoint.js';
import { OUTCOME_ACCEPTED_BYTES, routeReplyBytes } from '../json-writers.js';
import { outcomeReport as outcomeExample, routeRequest as routeExample, RULE_ID } from '../../schemas/examples.js';

const routeRequest = compile(RouteRequest, plainRouteRequest);
const outcomeReport = compile(OutcomeReport, plainOutcomeReport);

/** A repeated outcome of one transaction_id: acknowledged, not counted again (nothing recorded). */
function duplicateOutcome(tenant: Tenant, body: OutcomeReport) {
  const kind = classifyOutcome(body.success, body.error_code, tenant.errorCodes);
  return { status: 202, body: { status: 'accepted', classification: CLASSIFICATION_NAMES[kind], duplicate: true } };
}

/** `shadow` observes routes and outcomes of tenants in shadow mode (counter increments only). */
export function routingEndpoints(app: AppContext, shadow: ShadowObserver | null = null): Endpoint[] {
  return [
    endpoint({
      method: 'POST',
      path: '/v1/route',
      auth: true,
      body: routeRequest,
      flatBody: true,
      plainBody: ROUTE_REQUEST_FORM,
      handler: (ctx, body) => {
        const tenant = tenantOf(app, ctx);
        const route = matchRoute(tenant, body);
        if (!route) throw errors.noMatch();
        const side = pickSide(app.tables, route, Math.random());
        const predictionEnabled = tenant.settings.predictionEnabled;
        if (body.transaction_id !== undefined) app.decisions.routed(tenant, route.rule, body.transaction_id, pickedDecision(route, side, predictionEnabled), Date.now());
        tenant.counters.routed++;
        app.metrics.counts.routed++;
        if (shadow !== null && tenant.settings.shadowMode) shadow.routed(tenant, Date.now());
        return { status: 200, body: routeReplyBytes(route, side, predictionEnabled) };
      },
      doc: {
        summary: 'Choose the processor for a payment',
        tag: 'Routing',
        operationId: 'routePayment',
        writesStore: false,
        requestExample: routeExample,
        description:
          'Matches the most specific rule and picks a processor by its current weights. Also returns `rule_id` to report back with the outcome.',
        responses: {
          200: jsonBody('the routing decision', RouteDecision, {
            processor_id: 'stripe_us',
            weight: 0.9,
            fallback_processor_id: 'adyen_us',
            decision_source: 'rules',
            failure_probability: null,
            rule_id: RULE_ID,
          }),
          404: { description: 'no rule matches', schema: ErrorSchema, error: 'ROUTING_NO_MATCH' },
          422: { description: 'invalid fields', schema: ErrorSchema, error: 'VALIDATION_FAILED' },
        },
      },
    }),
    endpoint({
      method: 'POST',
      path: '/v1/outcome',
      auth: true,
      body: outcomeReport,
      flatBody: true,
      plainBody: OUTCOME_REPORT_FORM,
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
        return { status: 202, body: OUTCOME_ACCEPTED_BYTES[CLASSIFICATION_NAMES[recorded.kind]] };
      },
      doc: {
        summary: 'Report how a payment went',
        tag: 'Routing',
        operationId: 'reportOutcome',
        writesStore: false,
        requestExample: outcomeExample,
        description:
          'Failed outcomes are classified by error_code: issuer declines count against the success rate only; technical errors (timeouts, 5xx, network, no code) count as processor errors.',
        responses: {
          202: jsonBody('recorded', OutcomeAccepted, { status: 'accepted', classification: 'technical_error' }),
          422: { description: 'invalid fields, unknown rule_id, or processor not in the rule', schema: ErrorSchema, error: 'VALIDATION_FAILED' },
        },
      },
    }),
  ];
}
