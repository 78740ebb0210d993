/**
 * src/http/json-writers.ts's routeReplyBytes, inlined into the route handler, must stay
 * optimised when a rule's reply changes: that first happens at an evaluation cycle, under load,
 * and a deoptimisation then throws away the handler's optimised code while routes are served.
 * A memo entry's fields keep their kinds (a weight of 1 then 0.9, a failure probability of null
 * then 0.03) and a changed reply takes the same code as a new one.
 *
 * V8 only tells through its natives syntax, switched on in a child process before the probe
 * is compiled; the probe loads the built module (npm test builds first).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/server.js';

const MODULE = join(REPO_ROOT, 'dist', 'src', 'http', 'json-writers.js');

const PROBE = `
import v8 from 'node:v8';
v8.setFlagsFromString('--allow-natives-syntax');
const { routeReplyBytes } = await import(${JSON.stringify(MODULE)});
const prepare = new Function('f', '%PrepareFunctionForOptimization(f)');
const optimizeNext = new Function('f', '%OptimizeFunctionOnNextCall(f)');
const status = new Function('f', 'return %GetOptimizationStatus(f)');
const OPTIMIZED = 1 << 4;
// One decision object, overwritten for every route, as decide() does (src/routing/decide.ts),
// its fields of their final kinds: only the memo's own objects are under test.
const d = { processor_id: '', weight: 0.5, fallback_processor_id: '', decision_source: 'rules', failure_probability: 0.5, rule_id: '' };
d.failure_probability = null;
function decision(rule, weight, failProb) {
  d.processor_id = 'stripe'; d.weight = weight; d.fallback_processor_id = 'adyen'; d.decision_source = 'tier1'; d.failure_probability = failProb; d.rule_id = rule;
  return d;
}
// A route: the reply of one rule side, as the handler asks for it.
function route(d, key) { return routeReplyBytes(d, key).length; }
prepare(route);
prepare(routeReplyBytes);
// As after start: each rule side written once, then the same reply again and again.
for (let i = 0; i < 50; i++) route(decision('r1', 1, null), 2);
for (let i = 0; i < 50; i++) route(decision('r2', 1, null), 4);
optimizeNext(route);
route(decision('r1', 1, null), 2);
const before = (status(route) & OPTIMIZED) !== 0;
// The first cycle moves the weights and the failure probability: every reply changes.
const changed = [route(decision('r1', 0.9, 0.03), 2), route(decision('r2', 0.75, 0.1), 4), route(decision('r1', 0.85, null), 2)];
const bytes = routeReplyBytes(decision('r1', 0.85, null), 2).toString();
console.log(JSON.stringify({ before, after: (status(route) & OPTIMIZED) !== 0, changed, bytes }));
`;

describe('the route reply memo under a changing decision', () => {
  it("stays optimised when a rule's weights and failure probability move", () => {
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', PROBE], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 60_000 });
    const line = r.stdout.trim().split('\n').pop() ?? '';
    if (!line.startsWith('{')) throw new Error(`probe failed (exit ${r.status}): ${r.stderr}`);
    const out = JSON.parse(line) as { before: boolean; after: boolean; changed: number[]; bytes: string };
    expect(out.before).toBe(true); // the premise: optimised before the change
    expect(out.after).toBe(true);
    // And the reply is the new one, not the memo's old bytes.
    expect(JSON.parse(out.bytes)).toEqual({ processor_id: 'stripe', weight: 0.85, fallback_processor_id: 'adyen', decision_source: 'tier1', failure_probability: null, rule_id: 'r1' });
  });
});
