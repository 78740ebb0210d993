/** GET /v1/stats (spec 2.8). */
import { Type } from '@sinclair/typebox';
import { tenantOf, type AppContext } from '../../app-context.js';
import { tierOf } from '../../tenants/tenant.js';
import { endpoint, jsonBody, type Endpoint } from '../endpoint.js';
import { ClusterStatusSchema } from '../../schemas/cluster.js';

export const EngineStats = Type.Object(
  {
    transactions_routed: Type.Integer(),
    transactions_reported: Type.Integer(),
    failover_events: Type.Integer(),
    running: Type.Boolean(),
    shadow_mode: Type.Boolean(),
    tier: Type.Integer({ minimum: 1, maximum: 3 }),
    trie: Type.Object({ total_nodes: Type.Integer(), total_rules: Type.Integer() }),
    bandit: Type.Object({ rule_count: Type.Integer({ description: 'rules whose traffic the bandit currently allocates' }) }),
    leadership: Type.Optional(ClusterStatusSchema),
  },
  { $id: 'EngineStats' },
);

export function statsEndpoints(app: AppContext, banditRuleCount: (tenantId: string) => number): Endpoint[] {
  return [
    endpoint({
      method: 'GET',
      path: '/v1/stats',
      auth: true,
      handler: (ctx) => {
        const t = tenantOf(app, ctx);
        return {
          status: 200,
          body: {
            transactions_routed: t.counters.routed,
            transactions_reported: t.counters.reported,
            failover_events: t.counters.failovers,
            running: app.engine.running(),
            shadow_mode: t.settings.shadowMode,
            tier: tierOf(t.settings),
            trie: { total_nodes: t.trie.totalNodes, total_rules: t.trie.totalRules },
            bandit: { rule_count: banditRuleCount(t.id) },
            ...(app.leadership !== undefined && { leadership: app.leadership.status() }),
          },
        };
      },
      doc: {
        summary: 'Engine statistics of the caller\'s tenant',
        tag: 'Monitoring',
        operationId: 'getStats',
        responses: {
          200: jsonBody('statistics', EngineStats, {
            transactions_routed: 15230,
            transactions_reported: 15102,
            failover_events: 1,
            running: true,
            shadow_mode: false,
            tier: 1,
            trie: { total_nodes: 4, total_rules: 1 },
            bandit: { rule_count: 0 },
          }),
        },
      },
    }),
  ];
}
