/**
 * The in-memory form of a live rule's record, built once when the rule goes live (RuleService).
 * A record decoded from LMDB is costly to keep as it comes, which at 100,000 rules was ~45 MB
 * of the front thread's heap:
 * - every attribute and processor id or name is its own string object, although a rule set
 *   holds a few hundred distinct values (`USD`, `card`, `*`, `stripe_us`): ~1,000,000 copies;
 * - `created_at` (and any string of 13 characters or more) is a slice of the whole record's
 *   decoded text (msgpackr's native string extraction), which keeps that ~190-byte text alive;
 * - the properties sit outside the object (a separate property array).
 * Here short strings are interned, long ones copied flat (a timestamp equal to the last one
 * shares its string), and the record is a plain object literal with every field inside it.
 * Values are unchanged, so nothing that reads a record can tell; only a store that keeps its
 * own objects (PostgreSQL's in-memory copy, `Collection.retainsValues`) is left alone, since
 * copying its records would double them.
 */
import type { RuleRecord } from '../tenants/tenant.js';

/** Longer strings are unlikely to repeat (rule ids, timestamps): copied flat, not interned. */
const MAX_INTERNED_LENGTH = 64;
/**
 * Bounds the table on a service whose rules churn through many distinct processor names:
 * when full it starts again (strings already shared stay shared; later ones are shared anew).
 */
export const MAX_INTERNED = 65_536;
const interned = new Map<string, string>();

/**
 * A copy of `s` that references no other string. V8 keeps strings of 13 or more characters
 * cut out of a larger one as slices of it; a UTF-8 round trip builds a new sequential string.
 * A string that does not survive the round trip (a lone surrogate) is kept as it is.
 */
export function flatString(s: string): string {
  if (s.length < 13) return s;
  const copy = Buffer.from(s, 'utf8').toString('utf8');
  return copy === s ? copy : s;
}

/** One shared, flat string object per distinct short value. */
export function internString(s: string): string {
  if (s.length > MAX_INTERNED_LENGTH) return flatString(s);
  const hit = interned.get(s);
  if (hit !== undefined) return hit;
  if (interned.size >= MAX_INTERNED) interned.clear();
  const flat = flatString(s);
  interned.set(flat, flat);
  return flat;
}

/**
 * The last timestamp kept: rules created together (an onboarding, rules loaded in the order
 * they were written) share one string object instead of ~40 bytes each.
 */
let lastStamp = '';
function sharedStamp(s: string): string {
  if (s !== lastStamp) lastStamp = flatString(s);
  return lastStamp;
}

/** Number of distinct strings held (tests). */
export function internedCount(): number {
  return interned.size;
}

export function compactRecord(r: RuleRecord): RuleRecord {
  const attributes = r.attributes.map(internString);
  // Two literals, so a record never carries an `updated_at: undefined` key it did not have.
  if (r.updated_at === undefined) {
    return {
      rule_id: flatString(r.rule_id),
      attributes,
      primary_id: internString(r.primary_id),
      primary_name: internString(r.primary_name),
      secondary_id: internString(r.secondary_id),
      secondary_name: internString(r.secondary_name),
      primary_weight: r.primary_weight,
      created_at: sharedStamp(r.created_at),
    };
  }
  return {
    rule_id: flatString(r.rule_id),
    attributes,
    primary_id: internString(r.primary_id),
    primary_name: internString(r.primary_name),
    secondary_id: internString(r.secondary_id),
    secondary_name: internString(r.secondary_name),
    primary_weight: r.primary_weight,
    created_at: sharedStamp(r.created_at),
    updated_at: sharedStamp(r.updated_at),
  };
}
