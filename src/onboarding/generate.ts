/**
 * Onboarding rule generation (spec 4.5), pure: validate the request's codes against the ISO
 * lists, then build one rule per (country, currency, payment method) combination served.
 *
 *   - primary   = the processor with the lowest `priority` number serving the combination,
 *     secondary = the next one; equal priorities are ordered as the processors were listed.
 *   - a combination served by one processor gets a self-fallback rule (primary = secondary).
 *   - rule id `us_usd_card` (lower case), attributes [US, USD, card] (as the rules code
 *     normalizes them: country and currency upper case, payment method lower case).
 */
import { COUNTRY_CODES } from '../data/iso-3166-1-alpha2.js';
import { CURRENCY_CODES } from '../data/iso-4217.js';
import { errors, ServiceError, type FieldIssue } from '../errors.js';
import { padAttributes } from '../routing/attributes.js';
import {
  DEFAULT_ONBOARD_PRIMARY_WEIGHT,
  DEFAULT_PRIORITY,
  MAX_ONBOARD_RULES,
  type OnboardProcessor,
  type OnboardRequest,
} from '../schemas/onboarding.js';
import { PAYMENT_METHODS } from '../schemas/routing.js';
import type { RuleRecord } from '../tenants/tenant.js';

const MAX_ISSUES = 50;
const METHODS: ReadonlySet<string> = new Set(PAYMENT_METHODS);

/** A processor with defaults applied and codes normalized (deduplicated, in first-seen order). */
export interface NormalizedProcessor {
  index: number;
  processor_id: string;
  name: string;
  countries: string[];
  currencies: string[];
  payment_methods: string[];
  priority: number;
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}

/**
 * Checks what the schema cannot: unique processor ids, known ISO codes, known payment
 * methods. Every problem is reported (up to 50) with its JSON path and the offending value.
 */
export function validateOnboarding(req: OnboardRequest): NormalizedProcessor[] {
  const issues: FieldIssue[] = [];
  const add = (field: string, message: string) => {
    if (issues.length < MAX_ISSUES) issues.push({ field, message });
  };
  const firstIndex = new Map<string, number>();
  req.processors.forEach((p, i) => {
    const seen = firstIndex.get(p.processor_id);
    if (seen !== undefined) add(`processors[${i}].processor_id`, `duplicate processor id "${p.processor_id}" (also processors[${seen}])`);
    else firstIndex.set(p.processor_id, i);
    p.countries.forEach((c, j) => {
      if (!COUNTRY_CODES.has(c.toUpperCase())) add(`processors[${i}].countries[${j}]`, `unknown ISO 3166-1 alpha-2 country code "${c}"`);
    });
    p.currencies.forEach((c, j) => {
      if (!CURRENCY_CODES.has(c.toUpperCase())) add(`processors[${i}].currencies[${j}]`, `unknown ISO 4217 currency code "${c}"`);
    });
    (p.payment_methods ?? []).forEach((m, j) => {
      if (!METHODS.has(m.toLowerCase())) add(`processors[${i}].payment_methods[${j}]`, `unknown payment method "${m}"; allowed: ${PAYMENT_METHODS.join(', ')}`);
    });
  });
  if (issues.length === 1) throw errors.validation(issues);
  if (issues.length > 1) {
    // Name every value in the message too, not only in `fields`.
    const all = issues.map((f) => `"${f.field}": ${f.message}`).join('; ');
    throw new ServiceError('VALIDATION_FAILED', `invalid fields: ${all.length > 2000 ? `${all.slice(0, 2000)}...` : all}`, issues);
  }
  return req.processors.map((p: OnboardProcessor, index) => ({
    index,
    processor_id: p.processor_id,
    name: p.name,
    countries: unique(p.countries.map((c) => c.toUpperCase())),
    currencies: unique(p.currencies.map((c) => c.toUpperCase())),
    payment_methods: unique((p.payment_methods ?? ['card']).map((m) => m.toLowerCase())),
    priority: p.priority ?? DEFAULT_PRIORITY,
  }));
}

/** Rule id of a combination: lower-case country, currency and payment method joined by `_`. */
export function onboardingRuleId(country: string, currency: string, method: string): string {
  return `${country}_${currency}_${method}`.toLowerCase();
}

/** primary before secondary: lower priority number first, then the order given. */
function byRank(a: NormalizedProcessor, b: NormalizedProcessor): number {
  return a.priority - b.priority || a.index - b.index;
}

/**
 * Builds the rules, ordered by rule id. More than `maxRules` combinations is a 422
 * (LIMIT_EXCEEDED), detected while counting, before the full product is built.
 */
export function generateRules(
  processors: NormalizedProcessor[],
  primaryWeight: number = DEFAULT_ONBOARD_PRIMARY_WEIGHT,
  now: Date = new Date(),
  maxRules: number = MAX_ONBOARD_RULES,
): RuleRecord[] {
  // combination id → its two best-ranked processors so far
  const best = new Map<string, { attrs: [string, string, string]; first: NormalizedProcessor; second: NormalizedProcessor | null }>();
  for (const p of processors) {
    for (const country of p.countries) {
      for (const currency of p.currencies) {
        for (const method of p.payment_methods) {
          const id = onboardingRuleId(country, currency, method);
          const cur = best.get(id);
          if (!cur) {
            if (best.size >= maxRules) {
              throw errors.limit('processors', `the request would generate more than ${maxRules} rules (one per country, currency and payment method served); split it into several requests`);
            }
            best.set(id, { attrs: [country, currency, method], first: p, second: null });
          } else if (byRank(p, cur.first) < 0) {
            cur.second = cur.first;
            cur.first = p;
          } else if (cur.second === null || byRank(p, cur.second) < 0) {
            cur.second = p;
          }
        }
      }
    }
  }
  const createdAt = now.toISOString();
  const ids = [...best.keys()].sort();
  return ids.map((id) => {
    const { attrs, first, second } = best.get(id)!;
    const sec = second ?? first;
    return {
      rule_id: id,
      attributes: padAttributes(attrs),
      primary_id: first.processor_id,
      primary_name: first.name,
      secondary_id: sec.processor_id,
      secondary_name: sec.name,
      primary_weight: primaryWeight,
      created_at: createdAt,
    };
  });
}
