/** The cluster block of `GET /` and `GET /v1/stats` (present only in cluster mode, SERVICE_REDIS_URL). */
import { Type } from '@sinclair/typebox';

export const ClusterStatusSchema = Type.Object(
  {
    replica_id: Type.String({ description: 'SERVICE_REPLICA_ID' }),
    role: Type.Union([Type.Literal('leader'), Type.Literal('follower'), Type.Literal('fallback')], {
      description: 'leader: evaluates for the cluster; follower: routes by the leader\'s decision table; fallback: no fresh table for SERVICE_CLUSTER_STALE_MS (Redis down or no leader), evaluates its own outcomes',
    }),
    leader: Type.Boolean(),
    leader_id: Type.Union([Type.String(), Type.Null()], { description: 'the replica holding the lease, as last seen; null when unknown' }),
    epoch: Type.Integer({ description: 'leader epoch: grows with every new leadership' }),
    table_age_seconds: Type.Union([Type.Number(), Type.Null()], { description: "seconds since this replica last knew it held the leader's current decision table; 0 on the leader, null before the first" }),
    redis_connected: Type.Boolean(),
  },
  { $id: 'ClusterLeadership' },
);
