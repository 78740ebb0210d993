/**
 * A tier setting out of range: a RangeError whose message is "invalid <tier> config: <field>"
 * and which carries the tier and the field (non-enumerable, so the error compares and prints
 * as the plain RangeError it always was), so callers (the tenant configuration's 400 answer)
 * name the field without parsing the message.
 */
export type TierName = 'tier1' | 'foresight' | 'bandit';

export interface TierConfigError extends RangeError {
  /** Which settings: 'tier1', 'foresight' (Tier 2) or 'bandit' (Tier 3, Autopilot). */
  readonly tier: TierName;
  /** The field: the config key (camelCase), or the API name when a tenant value was checked. */
  readonly field: string;
}

export function tierConfigError(tier: TierName, field: string): TierConfigError {
  return Object.defineProperties(new RangeError(`invalid ${tier} config: ${field}`), {
    tier: { value: tier, enumerable: false },
    field: { value: field, enumerable: false },
  }) as TierConfigError;
}

export function isTierConfigError(e: unknown): e is TierConfigError {
  return e instanceof RangeError && typeof (e as Partial<TierConfigError>).tier === 'string' && typeof (e as Partial<TierConfigError>).field === 'string';
}
