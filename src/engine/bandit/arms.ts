/**
 * Which arms a routing rule has. A rule names a primary and a secondary processor; when both
 * are the same processor (a self-fallback rule) there is one arm, not two identical ones:
 * two arms over one processor would split its evidence and waste exploration on a comparison
 * that cannot come out either way.
 */

/** Tier 1 processor status, as named in spec section 2.5. */
export type ArmStatus = 'healthy' | 'degraded' | 'failed_over';

/** The distinct processors of a rule in arm order: [primary] or [primary, secondary]. */
export function ruleArms(primaryId: string, secondaryId: string): readonly string[] {
  return primaryId === secondaryId ? [primaryId] : [primaryId, secondaryId];
}
