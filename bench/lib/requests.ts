/**
 * The HTTP requests the benchmarks send, built from the seeded rule set (seed.ts), so that the
 * benchmarks and the test that checks their targets answer correctly use the same ones.
 * Every tenant holds the same rule set; API key `key<i>` belongs to tenant `t<i>`.
 */
import type { RuleRecord } from '../../src/tenants/tenant.js';

export interface BenchRequest {
  method: string;
  path: string;
  body: string;
  headers: Record<string, string>;
}

export const keyOf = (tenantIndex: number): string => `key${tenantIndex}`;

/** SERVICE_API_KEYS for seeded tenants t0..t<n-1>. */
export function apiKeysFor(tenants: readonly string[]): string {
  return tenants.map((t, i) => `${keyOf(i)}:${t}`).join(',');
}

/** `n` rules spread over the rule set (a prime stride, so wildcards and layers are all hit). */
export function sampleRules(rules: readonly RuleRecord[], n = 200): RuleRecord[] {
  return Array.from({ length: n }, (_, i) => rules[(i * 7919) % rules.length]);
}

/** A transaction that the rule's attributes accept (a wildcard country becomes ZZ). */
export function routeBody(r: RuleRecord): Record<string, unknown> {
  const a = r.attributes;
  return {
    country: a[0] === '*' ? 'ZZ' : a[0],
    currency: a[1],
    payment_method: a[2],
    card_type: a[3] === '*' ? 'visa' : a[3],
    transaction_type: a[4] === '*' ? 'one_time' : a[4],
    amount: 42,
  };
}

/** Route requests for `sample`, request i sent as tenant i mod `tenants`. */
export function routeRequests(sample: readonly RuleRecord[], tenants: number): BenchRequest[] {
  return sample.map((r, i) => ({
    method: 'POST',
    path: '/v1/route',
    headers: { 'x-api-key': keyOf(i % tenants) },
    body: JSON.stringify(routeBody(r)),
  }));
}

/**
 * The route requests again, each body with a `transaction_id` of its own (`copies` times the
 * list), as a checkout that looks its decisions up later sends them: each such route is a
 * record the decision log writes (src/decisions/decision-log.ts). wrk replays the list, so an
 * id comes back after `copies` × its length requests; a repeated route replaces its record,
 * the same write.
 */
export function withTransactionIds(route: readonly BenchRequest[], copies = 20): BenchRequest[] {
  const out: BenchRequest[] = [];
  for (let k = 0; k < copies; k++) {
    for (const r of route) out.push({ ...r, body: JSON.stringify({ ...JSON.parse(r.body), transaction_id: `bench_${out.length}` }) });
  }
  return out;
}

/**
 * One outcome report for every (tenant, rule) pair, so that every rule slot gets traffic and
 * the evaluation cycle has real work: approvals, 8% issuer declines, a tenth on the secondary.
 * No technical errors: autocannon's connections replay this list in near lockstep, so one
 * entry reaches its rule ~once per connection in a row, and a technical error there would be
 * a run that fails the rule over; the cycle costs the same either way.
 */
export function outcomeRequests(rules: readonly RuleRecord[], tenants: number): BenchRequest[] {
  const out: BenchRequest[] = [];
  for (let i = 0; i < rules.length * tenants; i++) {
    const r = rules[i % rules.length];
    const report = {
      rule_id: r.rule_id,
      processor_id: i % 10 === 9 ? r.secondary_id : r.primary_id,
      success: i % 25 >= 2,
      latency_ms: 80 + ((i * 37) % 400),
      error_code: i % 25 < 2 ? 'do_not_honor' : null,
    };
    out.push({ method: 'POST', path: '/v1/outcome', headers: { 'x-api-key': keyOf(Math.floor(i / rules.length)) }, body: JSON.stringify(report) });
  }
  return out;
}

/**
 * The profiling benches' loads (`bench:profile`, `bench:alloc`, `compare-builds`): routes for
 * the bench's 200 sampled rules (sampleRules), request i as tenant i mod `tenants`, and one
 * outcome report for each of the first 50 of them, sent with the keys of the tenants in turn.
 */
export function hotPathRequests(rules: readonly RuleRecord[], tenants: number): { route: BenchRequest[]; outcome: BenchRequest[] } {
  const sample = sampleRules(rules);
  return {
    route: routeRequests(sample, tenants),
    outcome: outcomeRequests(sample.slice(0, 50), 1).map((q, i) => ({ ...q, headers: { 'x-api-key': keyOf(i % tenants) } })),
  };
}
