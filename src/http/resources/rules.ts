/** /v1/rules: create, list, read, change, delete (spec 2.4, 4.2). */
import { Type } from '@sinclair/typebox';
import { tenantOf, type AppContext } from '../../app-context.js';
import { errors } from '../../errors.js';
import { compile, ErrorSchema, ID_PATTERN, MAX_ID_LENGTH } from '../../schemas/common.js';
import { Deleted, RuleInput, RuleOutput, RulePatch } from '../../schemas/rules.js';
import { ruleOutput } from '../../rules/rule-service.js';
import { ID_PAGE_DEFAULT, ID_PAGE_MAX, idPageRequest, nextLink } from '../pagination.js';
import { jsonArrayChunks } from '../stream-reply.js';
import { endpoint, jsonBody, type Endpoint } from '../endpoint.js';
import { rule as ruleExample, ruleInput as ruleInputExample, RULE_ID } from '../../schemas/examples.js';

const ruleInput = compile(RuleInput);
const rulePatch = compile(RulePatch);
const idPattern = new RegExp(ID_PATTERN);

export function checkPathId(field: string, value: string): string {
  if (value.length === 0 || value.length > MAX_ID_LENGTH || !idPattern.test(value)) {
    throw errors.field(field, `must be 1-${MAX_ID_LENGTH} characters of letters, digits, '_', '.', ':', '-'`);
  }
  return value;
}

export function isRuleId(id: string): boolean {
  return id.length > 0 && id.length <= MAX_ID_LENGTH && idPattern.test(id);
}

/** The query parameters of id-ordered pages (rules, health). */
export const PAGE_QUERY = [
  { name: 'limit', description: `page size, 1-${ID_PAGE_MAX}, default ${ID_PAGE_DEFAULT}`, schema: { type: 'integer', minimum: 1, maximum: ID_PAGE_MAX } },
  { name: 'after', description: 'continue after this rule_id (exclusive)', schema: { type: 'string' } },
];

export function ruleEndpoints(app: AppContext): Endpoint[] {
  return [
    endpoint({
      method: 'GET',
      path: '/v1/rules',
      auth: true,
      handler: (ctx) => {
        const page = idPageRequest(ctx, isRuleId);
        const rules = app.rules.page(tenantOf(app, ctx), page.limit, page.after);
        return {
          status: 200,
          stream: jsonArrayChunks(rules, (r) => JSON.stringify(ruleOutput(r.record))),
          headers: nextLink('/v1/rules', page, rules.length, rules[rules.length - 1]?.record.rule_id),
        };
      },
      doc: {
        summary: 'List routing rules',
        tag: 'Rules',
        operationId: 'listRules',
        description:
          'In `rule_id` order, paginated: `limit` (1-10000, default 1000) and `after` (the `rule_id` of the last rule of the previous page); a full page carries `Link: </v1/rules?limit=…&after=…>; rel="next"`. Follow it until a page comes without one.',
        query: PAGE_QUERY,
        responses: { 200: jsonBody('the tenant\'s rules', Type.Array(RuleOutput), [ruleExample]) },
      },
    }),
    endpoint({
      method: 'POST',
      path: '/v1/rules',
      auth: true,
      body: ruleInput,
      handler: async (ctx, body) => {
        const record = await app.rules.create(tenantOf(app, ctx), body);
        const out = ruleOutput(record);
        await app.audit.record(ctx, { action: 'rule.created', target_type: 'rule', target_id: record.rule_id, before: null, after: out });
        return { status: 201, body: out };
      },
      doc: {
        summary: 'Create a routing rule',
        tag: 'Rules',
        operationId: 'createRule',
        requestExample: ruleInputExample,
        description: 'Attributes shorter than 6 are padded with `*`. Names default to ids, primary_weight to 0.9; secondary_weight is 1 − primary_weight.',
        responses: {
          201: jsonBody('the created rule', RuleOutput, {
            ...ruleExample,
            rule_id: ruleInputExample.rule_id,
            attributes: ['GB', 'GBP', 'card', '*', '*', '*'],
            primary: { processor_id: 'adyen_eu', name: 'Adyen EU' },
            secondary: { processor_id: 'stripe_eu', name: 'Stripe EU' },
          }),
          409: { description: 'a rule with this id (or these attributes) exists', schema: ErrorSchema, error: 'RULE_ALREADY_EXISTS' },
          422: { description: 'invalid fields', schema: ErrorSchema, error: 'VALIDATION_FAILED' },
        },
      },
    }),
    endpoint({
      method: 'GET',
      path: '/v1/rules/{rule_id}',
      auth: true,
      handler: (ctx) => {
        const id = checkPathId('rule_id', ctx.params.rule_id);
        return { status: 200, body: ruleOutput(app.rules.get(tenantOf(app, ctx), id)) };
      },
      doc: {
        summary: 'Get one routing rule',
        tag: 'Rules',
        operationId: 'getRule',
        pathExamples: { rule_id: RULE_ID },
        responses: {
          200: jsonBody('the rule', RuleOutput, ruleExample),
          404: { description: 'no such rule', schema: ErrorSchema, error: 'RULE_NOT_FOUND' },
          422: { description: 'malformed rule id', schema: ErrorSchema, error: 'VALIDATION_FAILED' },
        },
      },
    }),
    endpoint({
      method: 'PATCH',
      path: '/v1/rules/{rule_id}',
      auth: true,
      body: rulePatch,
      handler: async (ctx, body) => {
        const id = checkPathId('rule_id', ctx.params.rule_id);
        const { before, after } = await app.rules.patch(tenantOf(app, ctx), id, body);
        const out = ruleOutput(after);
        await app.audit.record(ctx, { action: 'rule.updated', target_type: 'rule', target_id: id, before: ruleOutput(before), after: out });
        return { status: 200, body: out };
      },
      doc: {
        summary: 'Change a routing rule in place',
        tag: 'Rules',
        operationId: 'updateRule',
        pathExamples: { rule_id: RULE_ID },
        requestExample: { primary_weight: 0.7 },
        description:
          'Any of attributes, processor ids and names, primary_weight (at least one; the id cannot change). Routing switches to the new version atomically: ' +
          'the rule is never missing. Engine state (status, health, predictions, bandit posterior) of a processor that stays in the rule is kept; a new processor starts fresh. ' +
          'A changed processor id without a name takes the id as its name. Same attribute conflict rule as creation (409).',
        responses: {
          200: jsonBody('the changed rule', RuleOutput, { ...ruleExample, primary_weight: 0.7, secondary_weight: 0.3 }),
          404: { description: 'no such rule', schema: ErrorSchema, error: 'RULE_NOT_FOUND' },
          409: { description: 'another rule has these attributes', schema: ErrorSchema, error: 'RULE_ALREADY_EXISTS' },
          422: { description: 'invalid fields', schema: ErrorSchema, error: 'VALIDATION_FAILED' },
        },
      },
    }),
    endpoint({
      method: 'DELETE',
      path: '/v1/rules/{rule_id}',
      auth: true,
      handler: async (ctx) => {
        const id = checkPathId('rule_id', ctx.params.rule_id);
        const before = await app.rules.remove(tenantOf(app, ctx), id);
        await app.audit.record(ctx, { action: 'rule.deleted', target_type: 'rule', target_id: id, before: ruleOutput(before), after: null });
        return { status: 200, body: { deleted: id } };
      },
      doc: {
        summary: 'Delete a routing rule',
        tag: 'Rules',
        operationId: 'deleteRule',
        pathExamples: { rule_id: RULE_ID },
        responses: {
          200: jsonBody('deleted', Deleted, { deleted: RULE_ID }),
          404: { description: 'no such rule', schema: ErrorSchema, error: 'RULE_NOT_FOUND' },
          422: { description: 'malformed rule id', schema: ErrorSchema, error: 'VALIDATION_FAILED' },
        },
      },
    }),
  ];
}
