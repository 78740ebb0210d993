/**
 * A processor status change, as a worker task returns it to the front thread, which records
 * it (audit trail, counters, metrics) and announces it (webhooks).
 *
 * Events (spec section 3 / 6.1):
 * - `processor.degraded`   healthy → degraded; also a secondary's (or a self-fallback
 *                          primary's) move into failed_over, which moves no traffic, so
 *                          there is no failover to announce, only a processor gone bad;
 * - `failover.triggered`   primary of a two-processor rule → failed_over: traffic moves
 *                          from `processor` (0) to the other one (1). One per failover, so
 *                          the lead records the failover event and bumps the counter here;
 * - `failover.recovered`   that primary failed_over → healthy: traffic starts moving back
 *                          to `processor` (0) from the other one. Always followed, in the
 *                          same task result, by the `processor.healthy` of the same move;
 * - `processor.healthy`    degraded or failed_over → healthy, any processor.
 */
import type { StatusName } from '../shm/layout.js';
import type { TransitionEvent } from '../tiers/tier1/events.js';

export type { TransitionEvent };

export interface Transition {
  /** Rule slot in the shared tables. */
  slot: number;
  /** RI_GENERATION of the slot when the task started; a result for an older generation is stale. */
  generation: number;
  /** 0 primary, 1 secondary. */
  processor: 0 | 1;
  event: TransitionEvent;
  from: StatusName;
  to: StatusName;
  /** Human readable, with the observed value and the threshold. */
  reason: string;
  /** The observed value that caused the move (a rate in 0..1, a run length, or a latency in ms). */
  triggerValue: number;
  /** The threshold it was compared with, in the same unit. */
  threshold: number;
  /** Evaluation time (task `nowMs`), epoch ms. */
  atMs: number;
}
