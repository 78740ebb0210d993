/**
 * Seeds a data directory with a realistic rule set straight through the store (an HTTP
 * create per rule would spend the benchmark's time on fsyncs): countries × currencies ×
 * methods, a share of card-type-specific rules, and wildcard fallbacks, spread over tenants.
 */
import { LmdbStore } from '../../src/store/lmdb-store.js';
import { toRecord } from '../../src/rules/rule-service.js';
import type { RuleRecord } from '../../src/tenants/tenant.js';

const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
export const COUNTRIES = Array.from({ length: 26 * 26 }, (_, i) => LETTERS[Math.floor(i / 26)] + LETTERS[i % 26]);
export const CURRENCIES = ['USD', 'EUR', 'GBP', 'JPY', 'BRL', 'INR', 'AUD', 'CAD', 'CHF', 'SEK'];
const METHODS = ['card', 'wallet', 'bank_transfer', 'bnpl'];
const CARDS = ['visa', 'mastercard', 'amex'];

export interface SeedSpec {
  rules: number;
  tenants: number;
}

/** Deterministic rule i of a tenant: about 1 in 10 is a wildcard or card-specific rule. */
export function ruleAt(i: number): RuleRecord {
  const country = COUNTRIES[i % COUNTRIES.length];
  const currency = CURRENCIES[Math.floor(i / COUNTRIES.length) % CURRENCIES.length];
  const method = METHODS[Math.floor(i / (COUNTRIES.length * CURRENCIES.length)) % METHODS.length];
  const layer = Math.floor(i / (COUNTRIES.length * CURRENCIES.length * METHODS.length));
  const attrs = [country, currency, method];
  if (layer > 0) attrs.push(CARDS[(layer - 1) % CARDS.length], layer > 3 ? 'recurring' : '*', layer > 6 ? 'standard' : '*');
  if (i % 10 === 9) attrs[0] = '*';
  return toRecord(
    { rule_id: `r${i}`, attributes: attrs, primary_id: `p${i % 7}`, secondary_id: `p${(i + 1) % 7}`, primary_weight: 0.9 },
    new Date(),
  );
}

export interface Seeded {
  tenants: string[];
  /** The rules every tenant holds (each tenant gets the same set). */
  rules: RuleRecord[];
}

/** The first `n` rules with distinct attributes (two rules may not share them). */
export function ruleSet(n: number): RuleRecord[] {
  const seen = new Set<string>();
  const set: RuleRecord[] = [];
  for (let i = 0; set.length < n; i++) {
    const r = ruleAt(i);
    const key = r.attributes.join('|');
    if (seen.has(key)) continue;
    seen.add(key);
    set.push(r);
  }
  return set;
}

export async function seed(dataDir: string, spec: SeedSpec): Promise<Seeded> {
  const store = new LmdbStore(dataDir);
  const rules = store.collection<RuleRecord>('rules');
  const tenants = Array.from({ length: spec.tenants }, (_, t) => `t${t}`);
  const set = ruleSet(Math.ceil(spec.rules / spec.tenants));
  for (const tenant of tenants) {
    await store.atomic((batch) => {
      for (const r of set) batch.put(rules, tenant, r.rule_id, r);
    });
  }
  await store.close();
  return { tenants, rules: set };
}
