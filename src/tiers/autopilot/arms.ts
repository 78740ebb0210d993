/**
 * The arms of a routing rule: its processors. When primary and secondary are the same
 * processor (a self-fallback rule) there is one arm, not two identical ones: two arms over
 * one processor would split its evidence and waste exploration on a comparison that cannot
 * come out either way (stage.ts allocates n = 1 then).
 */
import type { StatusName } from '../../shm/layout.js';

/** An arm's Tier 1 status (spec section 2.5), a hard constraint on its allocation. */
export type ArmStatus = StatusName;
