/** POST /v1/onboard (spec 2.11, 4.5). */
import { tenantOf, type AppContext } from '../../app-context.js';
import { onboard } from '../../onboarding/onboard.js';
import { compile, ErrorSchema } from '../../schemas/common.js';
import { MAX_ONBOARD_RULES, OnboardRequest, OnboardResponse } from '../../schemas/onboarding.js';
import { endpoint, jsonBody, type Endpoint } from '../endpoint.js';
import { onboardRequest as onboardRequestExample, onboardResponse } from '../../schemas/examples.js';

const onboardRequest = compile(OnboardRequest);

export function onboardingEndpoints(app: AppContext): Endpoint[] {
  return [
    endpoint({
      method: 'POST',
      path: '/v1/onboard',
      auth: true,
      body: onboardRequest,
      handler: async (ctx, body) => {
        const out = await onboard(app.rules, tenantOf(app, ctx), body);
        await app.audit.record(ctx, { action: 'onboarding.completed', target_type: 'onboarding', target_id: null, before: null, after: out });
        return { status: 201, body: out };
      },
      doc: {
        summary: 'Onboard processors: generate one rule per country, currency and payment method served',
        tag: 'Onboarding',
        operationId: 'onboardProcessors',
        requestExample: onboardRequestExample,
        description:
          'Rule ids are `us_usd_card` (lower case), attributes `[US, USD, card]`. Primary = lowest `priority` number, secondary = the next; ' +
          'equal priorities are ranked in the order the processors are listed. A combination served by one processor gets a self-fallback rule. ' +
          'Countries (ISO 3166-1 alpha-2) and currencies (ISO 4217) are case-insensitive and checked against the ISO lists. ' +
          `All or nothing: if any generated rule id or attribute set already exists, 409 lists every conflicting id and nothing is created. At most ${MAX_ONBOARD_RULES} rules per request.`,
        responses: {
          201: jsonBody('the created rules', OnboardResponse, onboardResponse),
          409: { description: 'generated rules that already exist (nothing created)', schema: ErrorSchema, error: 'ONBOARDING_CONFLICT' },
          422: { description: 'invalid fields (each named by its JSON path), or too many rules', schema: ErrorSchema, error: 'VALIDATION_FAILED' },
        },
      },
    }),
  ];
}
