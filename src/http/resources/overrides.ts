/**
 * Operator controls: rule overrides (pin / drain) with expiry, tenant-wide processor drains,
 * and manual failover / recovery through the engine.
 */
import { Type } from '@sinclair/typebox';
import { tenantOf, type AppContext } from '../../app-context.js';
import { errors } from '../../errors.js';
import type { EngineService } from '../../engine/engine-service.js';
import type { ClusterNode } from '../../cluster/cluster-node.js';
import type { OverrideService } from '../../overrides/override-service.js';
import { applyManualCommand, forwardManualCommand, type ManualAction } from '../manual-command.js';
import { compile, ErrorSchema } from '../../schemas/common.js';
import { DrainInput, Override, ProcessorDrain, RuleOverrideInput } from '../../schemas/overrides.js';
import type { LiveRule } from '../../tenants/tenant.js';
import { endpoint, jsonBody, type Ctx, type Endpoint } from '../endpoint.js';
import { RULE_ID, ruleHealth as ruleHealthExample } from '../../schemas/examples.js';
import { checkPathId } from './rules.js';
import { RuleHealth } from '../../schemas/health.js';

const ruleOverrideInput = compile(RuleOverrideInput);
const drainInput = compile(DrainInput);

export function overrideEndpoints(app: AppContext, engine: EngineService, overrides: OverrideService, cluster?: ClusterNode): Endpoint[] {
  const liveRule = (ctx: Ctx): LiveRule => {
    const id = checkPathId('rule_id', ctx.params.rule_id);
    const rule = tenantOf(app, ctx).rules.get(id);
    if (!rule) throw errors.ruleNotFound(id);
    return rule;
  };
  // Any replica takes the command: a cluster follower forwards it to the leader (manual-command.ts).
  const manual = (ctx: Ctx, action: ManualAction) => {
    const rule = liveRule(ctx);
    const tenant = tenantOf(app, ctx);
    if (cluster !== undefined && !cluster.evaluates()) return forwardManualCommand(cluster, tenant, rule, action, ctx.grant, cluster.settings.commandTimeoutMs);
    return applyManualCommand(app, engine, tenant, rule, action, ctx.grant);
  };
  const notFound = { description: 'no such rule (or another tenant\'s)', schema: ErrorSchema, error: 'RULE_NOT_FOUND' as const };
  const invalid = { description: 'invalid fields', schema: ErrorSchema, error: 'VALIDATION_FAILED' as const };
  const notApplied = { description: 'the engine did not apply it in time (in cluster mode: no leader answered, or Redis is unreachable)', schema: ErrorSchema, error: 'SERVICE_UNAVAILABLE' as const };
  const pin = {
    scope: 'rule' as const,
    rule_id: RULE_ID,
    mode: 'pin' as const,
    processor_id: 'adyen_us',
    reason: 'stripe_us incident INC-2041',
    created_at: '2026-05-04T12:00:00.000Z',
    expires_at: '2026-05-04T13:00:00.000Z',
  };
  const drain = { scope: 'processor' as const, mode: 'drain' as const, processor_id: 'stripe_us', reason: 'planned maintenance', created_at: pin.created_at, expires_at: pin.expires_at };
  const ruleExample = { rule_id: RULE_ID };
  const processorExample = { processor_id: 'stripe_us' };

  return [
    endpoint({
      method: 'GET',
      path: '/v1/overrides',
      auth: true,
      handler: (ctx) => ({ status: 200, body: overrides.list(tenantOf(app, ctx)) }),
      doc: {
        summary: 'Overrides in force (rule pins and drains, processor drains)',
        tag: 'Operator controls',
        operationId: 'listOverrides',
        responses: { 200: jsonBody('overrides', Type.Array(Override), [pin, drain]) },
      },
    }),
    endpoint({
      method: 'POST',
      path: '/v1/rules/{rule_id}/override',
      auth: true,
      body: ruleOverrideInput,
      handler: async (ctx, body) => {
        const rule = liveRule(ctx);
        const { before, after } = await overrides.setRuleOverride(tenantOf(app, ctx), rule, body.mode, body.processor_id, body);
        await app.audit.record(ctx, { action: 'override.set', target_type: 'override', target_id: rule.record.rule_id, before, after });
        return { status: 201, body: after };
      },
      doc: {
        summary: 'Pin a rule to one of its processors, or drain one from it, until the override expires',
        tag: 'Operator controls',
        operationId: 'setRuleOverride',
        pathExamples: ruleExample,
        requestExample: { mode: 'pin', processor_id: 'adyen_us', expires_in_s: 3600, reason: 'stripe_us incident INC-2041' },
        description:
          'Wins over every tier while it lasts; routing reports `decision_source: "rules"`; health shows it in `decision.override`. Replaces an existing override of the rule. Survives restarts.',
        responses: { 201: jsonBody('the override in force', Override, pin), 404: notFound, 422: invalid },
      },
    }),
    endpoint({
      method: 'DELETE',
      path: '/v1/rules/{rule_id}/override',
      auth: true,
      handler: async (ctx) => {
        const rule = liveRule(ctx);
        const removed = await overrides.clearRuleOverride(tenantOf(app, ctx), rule.record.rule_id);
        await app.audit.record(ctx, { action: 'override.deleted', target_type: 'override', target_id: rule.record.rule_id, before: removed, after: null });
        return { status: 200, body: { deleted: removed } };
      },
      doc: {
        summary: 'End a rule override now',
        tag: 'Operator controls',
        operationId: 'clearRuleOverride',
        pathExamples: ruleExample,
        responses: {
          200: jsonBody('the override that ended', Type.Object({ deleted: Override }, { $id: 'DeletedOverride' }), { deleted: pin }),
          404: { description: 'no such rule or no override', schema: ErrorSchema, error: 'OVERRIDE_NOT_FOUND' },
          422: { description: 'malformed rule id', schema: ErrorSchema, error: 'VALIDATION_FAILED' },
        },
      },
    }),
    endpoint({
      method: 'POST',
      path: '/v1/processors/{processor_id}/drain',
      auth: true,
      body: drainInput,
      handler: async (ctx, body) => {
        const pid = checkPathId('processor_id', ctx.params.processor_id);
        const { before, after, rules } = await overrides.drainProcessor(tenantOf(app, ctx), pid, body);
        await app.audit.record(ctx, { action: 'processor.drained', target_type: 'processor', target_id: pid, before, after: { ...after, rules } });
        return { status: 201, body: { override: after, rules } };
      },
      doc: {
        summary: 'Drain a processor from every rule of the tenant that has it',
        tag: 'Operator controls',
        operationId: 'drainProcessor',
        pathExamples: processorExample,
        requestExample: { expires_in_s: 1800, reason: 'planned maintenance' },
        description: 'A rule\'s own override wins over a processor drain. A rule with one processor, or whose two processors are both drained, keeps routing as the engine decides.',
        responses: {
          201: jsonBody('the drain and the rules it affects', ProcessorDrain, { override: drain, rules: [RULE_ID] }),
          404: { description: 'no rule of the tenant has the processor', schema: ErrorSchema, error: 'PROCESSOR_NOT_FOUND' },
          422: invalid,
        },
      },
    }),
    endpoint({
      method: 'DELETE',
      path: '/v1/processors/{processor_id}/drain',
      auth: true,
      handler: async (ctx) => {
        const pid = checkPathId('processor_id', ctx.params.processor_id);
        const removed = await overrides.undrainProcessor(tenantOf(app, ctx), pid);
        await app.audit.record(ctx, { action: 'processor.drain_deleted', target_type: 'processor', target_id: pid, before: removed, after: null });
        return { status: 200, body: { deleted: removed } };
      },
      doc: {
        summary: 'End a processor drain now',
        tag: 'Operator controls',
        operationId: 'undrainProcessor',
        pathExamples: processorExample,
        responses: {
          200: jsonBody('the drain that ended', Type.Object({ deleted: Override }, { $id: 'DeletedOverride' }), { deleted: drain }),
          404: { description: 'the processor is not drained', schema: ErrorSchema, error: 'OVERRIDE_NOT_FOUND' },
          422: { description: 'malformed processor id', schema: ErrorSchema, error: 'VALIDATION_FAILED' },
        },
      },
    }),
    endpoint({
      method: 'POST',
      path: '/v1/rules/{rule_id}/failover',
      auth: true,
      handler: (ctx) => manual(ctx, 'failover'),
      doc: {
        summary: 'Fail the rule over to its secondary now',
        tag: 'Operator controls',
        operationId: 'failoverRule',
        pathExamples: ruleExample,
        description:
          'As Tier 1 would: the primary becomes failed_over, a failover event is recorded (reason "manual"), `failover.triggered` is sent, the failover counter grows, and recovery probes start after the usual back-off. Answers once the engine has applied it. In cluster mode any replica takes it: a follower forwards it to the leader and answers with the leader\'s result once its own routes reflect it (503 after SERVICE_CLUSTER_COMMAND_TIMEOUT_MS when no leader answers).',
        responses: {
          200: jsonBody('the rule\'s health afterwards', RuleHealth, ruleHealthExample),
          404: notFound,
          409: { description: 'already failed over, or a single-processor rule', schema: ErrorSchema, error: 'ENGINE_STATE_CONFLICT' },
          503: notApplied,
        },
      },
    }),
    endpoint({
      method: 'POST',
      path: '/v1/rules/{rule_id}/recover',
      auth: true,
      handler: (ctx) => manual(ctx, 'recover'),
      doc: {
        summary: 'Recover the rule\'s failed-over processors now',
        tag: 'Operator controls',
        operationId: 'recoverRule',
        pathExamples: ruleExample,
        description:
          'Failed-over processors become healthy (`failover.recovered` for the primary, `processor.healthy`, reason "manual") and the primary gets its configured weight back now (the operator vouches for it, so the slow-start probe ladder is skipped). Outcomes before this moment no longer count against them. In cluster mode any replica takes it, as for a manual failover.',
        responses: {
          200: jsonBody('the rule\'s health afterwards', RuleHealth, {
            ...ruleHealthExample,
            primary: { ...ruleHealthExample.primary, status: 'healthy' },
            decision: { ...ruleHealthExample.decision, processor_id: 'stripe_us', weight: 0.1 },
          }),
          404: notFound,
          409: { description: 'nothing is failed over', schema: ErrorSchema, error: 'ENGINE_STATE_CONFLICT' },
          503: notApplied,
        },
      },
    }),
  ];
}
