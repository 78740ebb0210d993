/**
 * The form the embedded store keeps a rule record in: its values in a fixed order, tagged, not
 * the record object. lmdb-js encodes an object with its field names (msgpackr's inline record
 * structure), so a six-attribute rule took 204 bytes, ~100 of them names; at 100,000 rules
 * created through the API the rules database was ~40 MB of LMDB pages, all resident (every
 * write reads its page through the map). A record stored in the object form, by an earlier
 * version or by a tool, is read as it is.
 */
import type { RuleRecord } from '../tenants/tenant.js';
import type { StoredForm } from '../store/store.js';

/** The tag of the positional form, first in the array (an object record is never an array). */
export const RULE_FORM_V1 = 1;

export const storedRule: StoredForm<RuleRecord> = {
  toStored(r: RuleRecord): unknown {
    const values: unknown[] = [RULE_FORM_V1, r.rule_id, r.attributes, r.primary_id, r.primary_name, r.secondary_id, r.secondary_name, r.primary_weight, r.created_at];
    if (r.updated_at !== undefined) values.push(r.updated_at);
    return values;
  },
  fromStored(v: unknown): RuleRecord {
    if (!Array.isArray(v) || v[0] !== RULE_FORM_V1) return v as RuleRecord; // the object form (or not a rule: the reader checks)
    const r: RuleRecord = {
      rule_id: v[1],
      attributes: v[2],
      primary_id: v[3],
      primary_name: v[4],
      secondary_id: v[5],
      secondary_name: v[6],
      primary_weight: v[7],
      created_at: v[8],
    };
    if (v.length > 9) r.updated_at = v[9];
    return r;
  },
};
