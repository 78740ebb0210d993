/**
 * Manual failover / recover of a rule: the checks, the engine command, the audit entry and the
 * answer. One code path for a request made on this replica and for a command a cluster
 * follower forwarded to this replica as leader (command-relay.ts), so both give the same
 * validation results, audit entry and webhook.
 *
 * On a cluster follower the command is forwarded instead (`forwardManualCommand`), and the
 * follower answers with the leader's status and body once it has applied the leader's table.
 */
import type { AppContext } from '../app-context.js';
import type { CommandAnswer, ForwardedCommand, ManualAction } from '../cluster/command-relay.js';
import type { ClusterNode } from '../cluster/cluster-node.js';
import { NotLeaderError, type EngineService } from '../engine/engine-service.js';
import { ruleHealth } from '../engine/health-view.js';
import { errors, ServiceError, type ErrorCode } from '../errors.js';
import type { KeyGrant } from './api-keys.js';
import type { Reply } from './endpoint.js';
import { log } from '../log.js';
import { ManualCommand, ProcessorStatus } from '../shm/layout.js';
import { processorStatus } from '../shm/processor-rows.js';
import type { LiveRule, Tenant } from '../tenants/tenant.js';

export type { ManualAction } from '../cluster/command-relay.js';

/** Applies the command on this replica (single process, cluster leader, or fallback). Throws the ServiceError that answers it. */
export async function applyManualCommand(app: AppContext, engine: EngineService, tenant: Tenant, rule: LiveRule, action: ManualAction, grant: KeyGrant): Promise<Reply> {
  const id = rule.record.rule_id;
  const statusOf = (k: 0 | 1) => processorStatus(app.tables.ruleSegs, rule.slot, k);
  if (action === 'failover') {
    if (rule.record.primary_id === rule.record.secondary_id) throw errors.engineState(`rule "${id}" has a single processor: nothing to fail over to`);
    if (statusOf(0) === ProcessorStatus.FailedOver) throw errors.engineState(`the primary of rule "${id}" is already failed over`);
  } else if (statusOf(0) !== ProcessorStatus.FailedOver && statusOf(1) !== ProcessorStatus.FailedOver) {
    throw errors.engineState(`no processor of rule "${id}" is failed over`);
  }
  const before = ruleHealth(app.tables, rule, tenant.settings.predictionEnabled);
  try {
    await engine.command(tenant, rule, action === 'failover' ? ManualCommand.Failover : ManualCommand.Recover);
  } catch (e) {
    if (e instanceof NotLeaderError) throw errors.unavailable(e.message);
    throw errors.unavailable('the engine did not apply the command in time; it may still apply it at its next evaluation');
  }
  const after = ruleHealth(app.tables, rule, tenant.settings.predictionEnabled);
  await app.audit.record({ grant }, { action: action === 'failover' ? 'rule.failover' : 'rule.recover', target_type: 'rule', target_id: id, before, after });
  return { status: 200, body: after };
}

/** As cluster leader: applies a command a follower forwarded, answering what a local request would get. */
export async function serveForwardedCommand(app: AppContext, engine: EngineService, c: ForwardedCommand): Promise<CommandAnswer> {
  try {
    const tenant = app.tenants.find(c.tenant);
    if (!tenant) throw errors.tenantNotFound(c.tenant);
    const rule = tenant.rules.get(c.rule_id);
    if (!rule) throw errors.ruleNotFound(c.rule_id);
    // Replicas whose configurations disagree: the leader's table would not apply to the sender's rule.
    if (rule.record.primary_id !== c.primary_id || rule.record.secondary_id !== c.secondary_id) {
      throw errors.engineState(
        `rule "${c.rule_id}" has processors ${rule.record.primary_id}/${rule.record.secondary_id} on the cluster leader but ${c.primary_id}/${c.secondary_id} on the replica that received the command; retry once the configuration has reached every replica`,
      );
    }
    const grant: KeyGrant = { tenantId: c.tenant, admin: c.admin, ...(c.actor !== null && { keyFingerprint: c.actor }) };
    const r = await applyManualCommand(app, engine, tenant, rule, c.action, grant);
    return { status: r.status, body: r.body };
  } catch (e) {
    const err = e instanceof ServiceError ? e : errors.internal();
    if (!(e instanceof ServiceError)) log.error('forwarded operator command failed', { rule_id: c.rule_id, action: c.action, err: String((e as Error)?.stack ?? e) });
    return { status: err.status, error: { code: err.code, message: err.message, fields: err.fields, headers: err.headers } };
  }
}

/** As cluster follower: forwards to the leader and answers with its result (or a 503 naming why not). */
export async function forwardManualCommand(cluster: ClusterNode, tenant: Tenant, rule: LiveRule, action: ManualAction, grant: KeyGrant, timeoutMs: number): Promise<Reply> {
  const o = await cluster.forwardCommand(
    {
      tenant: tenant.id,
      rule_id: rule.record.rule_id,
      primary_id: rule.record.primary_id,
      secondary_id: rule.record.secondary_id,
      action,
      actor: grant.keyFingerprint ?? null,
      admin: grant.admin,
    },
    timeoutMs,
  );
  const secs = `${(timeoutMs / 1000).toFixed(1)} s`;
  if (!o.ok) {
    const leader = o.leaderId === null ? 'the cluster leader' : `the cluster leader (replica ${o.leaderId})`;
    switch (o.reason) {
      case 'no_leader':
        throw errors.unavailable('this replica follows the cluster, and no cluster leader is elected right now to apply the command; retry in a few seconds');
      case 'redis_unreachable':
        throw errors.unavailable(`this replica cannot reach Redis to forward the command to ${leader}; nothing was applied; retry, or send it to the leader`);
      case 'no_answer':
        throw errors.unavailable(`no answer from ${leader} within ${secs}; the command may still have been applied: check GET /v1/health/${rule.record.rule_id} before retrying`);
      case 'table_not_applied':
        throw errors.unavailable(
          `${leader} applied the command, but this replica had not received the decision table reflecting it within ${secs}; it follows shortly (GET /v1/health/${rule.record.rule_id})`,
        );
    }
  }
  const a = o.answer;
  if (a.error !== undefined) throw new ServiceError(a.error.code as ErrorCode, a.error.message, a.error.fields, a.error.headers);
  return { status: a.status, body: a.body };
}
