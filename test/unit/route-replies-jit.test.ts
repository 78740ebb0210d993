/**
 * src/http/json-writers.ts's routeReplyBytes, inlined into the route handler, must stay
 * optimised when a rule's reply changes: that first happens at an evaluation cycle, under load,
 * and a deoptimisation then throws away the handler's optimised code while routes are served.
 * A rule's RuleReplies keeps its fields' kinds (a share of 0.9 then 1, a failure probability of
 * NaN then 0.03) and a changed reply takes the same code as a rule's first one.
 *
 * V8 only tells through its natives syntax, switched on in a child process before the probe
 * is compiled; the probe loads the built modules (npm test builds first).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/server.js';

const built = (p: string) => JSON.stringify(join(REPO_ROOT, 'dist', 'src', p));

const PROBE = `
import v8 from 'node:v8';
v8.setFlagsFromString('--allow-natives-syntax');
const { routeReplyBytes } = await import(${built('http/json-writers.js')});
const { pickSide } = await import(${built('routing/decide.js')});
const { publishDecision } = await import(${built('shm/decision.js')});
const { ruleIndex, ruleSegment } = await import(${built('shm/slots.js')});
const { SharedTables } = await import(${built('shm/tables.js')});
const { cacheOf } = await import(${built('tenants/tenant.js')});
const prepare = new Function('f', '%PrepareFunctionForOptimization(f)');
const optimizeNext = new Function('f', '%OptimizeFunctionOnNextCall(f)');
const status = new Function('f', 'return %GetOptimizationStatus(f)');
const OPTIMIZED = 1 << 4;
const tables = new SharedTables();
const rule = (id) => ({
  record: { rule_id: id, attributes: [], primary_id: 'stripe', primary_name: 's', secondary_id: 'adyen', secondary_name: 'a', primary_weight: 0.9, created_at: '' },
  slot: tables.allocRule(0.9, false), runStartedAt: [0, 0], override: null, cache: null,
});
const r1 = cacheOf(rule('r1'));
const r2 = cacheOf(rule('r2'));
const publish = (r, share, fp) => publishDecision(ruleSegment(tables.ruleSegs, r.slot), ruleIndex(r.slot), { primaryShare: share, source: 1, failProbPrimary: fp, failProbSecondary: fp });
// A route, as the handler makes it: the side drawn, then the rule's reply for it.
function route(r, random) { return routeReplyBytes(r, pickSide(tables, r, random), true).length; }
prepare(route);
prepare(routeReplyBytes);
// As after start: each rule's replies written once, then the same ones again and again.
for (let i = 0; i < 50; i++) route(r1, 0.5);
for (let i = 0; i < 50; i++) route(r2, 0.95);
optimizeNext(route);
route(r1, 0.5);
const before = (status(route) & OPTIMIZED) !== 0;
// The first cycle moves the weights and the failure probabilities: every reply changes.
publish(r1, 1, 0.03);
publish(r2, 0.75, 0.1);
const changed = [route(r1, 0.5), route(r2, 0.95), route(r1, 0.2)];
const bytes = routeReplyBytes(r2, pickSide(tables, r2, 0.95), true).toString();
console.log(JSON.stringify({ before, after: (status(route) & OPTIMIZED) !== 0, changed, bytes }));
`;

describe('the per-rule route replies under a changing decision', () => {
  it("stay optimised when a rule's weights and failure probability move", () => {
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', PROBE], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 60_000 });
    const line = r.stdout.trim().split('\n').pop() ?? '';
    if (!line.startsWith('{')) throw new Error(`probe failed (exit ${r.status}): ${r.stderr}`);
    const out = JSON.parse(line) as { before: boolean; after: boolean; changed: number[]; bytes: string };
    expect(out.before).toBe(true); // the premise: optimised before the change
    expect(out.after).toBe(true);
    // And the reply is the new one, not the rule's old bytes.
    expect(JSON.parse(out.bytes)).toEqual({ processor_id: 'adyen', weight: 0.25, fallback_processor_id: 'stripe', decision_source: 'prediction', failure_probability: 0.1, rule_id: 'r2' });
  });
});
