/**
 * The processor events Tier 1's state machine emits (spec section 3 / 6.1); the front thread
 * turns each into a transition (src/engine/transitions.ts), an audit record and a webhook.
 * When each one fires is described in src/engine/transitions.ts.
 */
export const TRANSITION_EVENTS = ['failover.triggered', 'failover.recovered', 'processor.degraded', 'processor.healthy'] as const;
export type TransitionEvent = (typeof TRANSITION_EVENTS)[number];
