/**
 * The per-rule route replies (http/json-writers.ts routeReplyBytes, routing/rule-cache.ts):
 * every reply is the JSON of the decision the rule's published fields, its override and the
 * tenant's Tier 2 switch give at that moment, whatever the sequence of changes between routes;
 * and the routes each rule took reach its row's counters in batches.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { routeReplyBytes } from '../../src/http/json-writers.js';
import { applyOverride, pickSide, pickedDecision } from '../../src/routing/decide.js';
import { publishDecision } from '../../src/shm/decision.js';
import { DECISION_SOURCE_NAMES, DecisionSource, RF_PRIMARY_SHARE, RF_ROUTED, RULE_F64_STRIDE } from '../../src/shm/layout.js';
import { ruleIndex, ruleSegment } from '../../src/shm/slots.js';
import { SharedTables } from '../../src/shm/tables.js';
import { cacheOf, settingsForTier, Tenant, type LiveRule } from '../../src/tenants/tenant.js';
import { matchRoute } from '../../src/routing/decide.js';
import { noEvidenceProbability } from '../../src/tiers/foresight/prior.js';

function liveRule(tables: SharedTables, id: string): LiveRule {
  const record = { rule_id: id, attributes: ['*', '*', '*', '*', '*', '*'], primary_id: `${id}_p`, primary_name: 'p', secondary_id: `${id}_s`, secondary_name: 's', primary_weight: 0.9, created_at: '' };
  return { record, slot: tables.allocRule(0.9, false), runStartedAt: [0, 0], override: null, cache: null };
}

/** The decision as the spec describes it, computed here from the same inputs without the module's code. */
function expected(rule: LiveRule, side: number, share: number, source: DecisionSource, fps: [number, number], predictionEnabled: boolean) {
  const r = rule.record;
  const fp = fps[side];
  const round4 = (x: number) => Math.round(x * 10000) / 10000;
  return {
    processor_id: side === 0 ? r.primary_id : r.secondary_id,
    weight: round4(side === 0 ? share : 1 - share),
    fallback_processor_id: side === 0 ? r.secondary_id : r.primary_id,
    decision_source: DECISION_SOURCE_NAMES[source],
    failure_probability: predictionEnabled ? round4(Number.isNaN(fp) ? noEvidenceProbability() : fp) : null,
    rule_id: r.rule_id,
  };
}

describe('per-rule route replies', () => {
  it('always answer with the decision in force, across cycles, overrides and Tier 2 switches', () => {
    const share = fc.constantFrom(0, 0.1, 0.5, 0.9, 0.90004, 1, 0.123456);
    const fp = fc.constantFrom(Number.NaN, 0, 0.03, 0.030001, 0.5, 1);
    const step = fc.oneof(
      // One published field changed at a time: a cache that ignored any one of them would show it.
      fc.record({ kind: fc.constant('publish' as const), field: fc.constant('share' as const), value: share }),
      fc.record({ kind: fc.constant('publish' as const), field: fc.constant('source' as const), value: fc.constantFrom(DecisionSource.Rules, DecisionSource.Prediction, DecisionSource.Mab) }),
      fc.record({ kind: fc.constant('publish' as const), field: fc.constantFrom('fp0' as const, 'fp1' as const), value: fp }),
      fc.record({ kind: fc.constant('override' as const), share: fc.option(share, { nil: null }) }),
      fc.record({ kind: fc.constant('tier2' as const), on: fc.boolean() }),
      { arbitrary: fc.record({ kind: fc.constant('route' as const), rule: fc.nat(2), random: fc.double({ min: 0, max: 0.999999, noNaN: true }) }), weight: 4 },
    );
    fc.assert(
      fc.property(fc.array(step, { minLength: 20, maxLength: 80 }), (steps) => {
        const tables = new SharedTables();
        const rules = [liveRule(tables, 'ra'), liveRule(tables, 'rb'), liveRule(tables, 'rc')];
        // What each rule has published (allocRule: share 0.9, source rules, no failure probability).
        const state = rules.map(() => ({ share: 0.9, source: DecisionSource.Rules, fps: [Number.NaN, Number.NaN] as [number, number] }));
        let predictionEnabled = true;
        let target = 0; // the rule the next publish or override applies to
        for (const s of steps) {
          if (s.kind === 'publish') {
            const rule = rules[target];
            const st = state[target];
            if (s.field === 'share') st.share = s.value;
            else if (s.field === 'source') st.source = s.value;
            else st.fps[s.field === 'fp0' ? 0 : 1] = s.value;
            publishDecision(ruleSegment(tables.ruleSegs, rule.slot), ruleIndex(rule.slot), { primaryShare: st.share, source: st.source, failProbPrimary: st.fps[0], failProbSecondary: st.fps[1] });
          } else if (s.kind === 'override') {
            applyOverride(rules[target], s.share === null ? null : { primaryShare: s.share, record: {} as never });
          } else if (s.kind === 'tier2') {
            predictionEnabled = s.on;
          } else {
            const rule = rules[s.rule];
            target = s.rule;
            const side = pickSide(tables, cacheOf(rule), s.random);
            const st = state[s.rule];
            const ov = rule.override;
            const shareNow = ov != null ? ov.primaryShare : st.share;
            const sourceNow = ov != null ? DecisionSource.Rules : st.source;
            expect(side).toBe(s.random < shareNow ? 0 : 1);
            const want = expected(rule, side, shareNow, sourceNow, st.fps, predictionEnabled);
            expect(JSON.parse(routeReplyBytes(cacheOf(rule), side, predictionEnabled).toString('utf8'))).toEqual(want);
            // The bytes are exactly JSON.stringify's (key order, number forms).
            expect(routeReplyBytes(cacheOf(rule), side, predictionEnabled).toString('utf8')).toBe(JSON.stringify(want));
          }
        }
      }),
      { numRuns: 400 },
    );
  });

  it('reuses a rule\'s bytes while nothing changed, and writes them anew when something did', () => {
    const tables = new SharedTables();
    const rule = liveRule(tables, 'r1');
    const first = routeReplyBytes(cacheOf(rule), pickSide(tables, cacheOf(rule), 0.5), true);
    expect(routeReplyBytes(cacheOf(rule), pickSide(tables, cacheOf(rule), 0.5), true)).toBe(first); // the same Buffer
    expect(rule.cache).not.toBeNull();
    publishDecision(ruleSegment(tables.ruleSegs, rule.slot), ruleIndex(rule.slot), { primaryShare: 0.75, source: DecisionSource.Mab, failProbPrimary: 0.02, failProbSecondary: 0.01 });
    const moved = routeReplyBytes(cacheOf(rule), pickSide(tables, cacheOf(rule), 0.5), true);
    expect(moved).not.toBe(first);
    expect(JSON.parse(moved.toString())).toMatchObject({ weight: 0.75, decision_source: 'mab', failure_probability: 0.02 });
    // One failure probability moves, nothing else: the other side's reply shows it.
    publishDecision(ruleSegment(tables.ruleSegs, rule.slot), ruleIndex(rule.slot), { primaryShare: 0.75, source: DecisionSource.Mab, failProbPrimary: 0.02, failProbSecondary: 0.04 });
    expect(JSON.parse(routeReplyBytes(cacheOf(rule), pickSide(tables, cacheOf(rule), 0.99), true).toString())).toMatchObject({ processor_id: 'r1_s', failure_probability: 0.04 });
    // pickedDecision reads the same values the reply shows (the decision log records it).
    expect(pickedDecision(cacheOf(rule), 0, true)).toMatchObject({ processor_id: 'r1_p', weight: 0.75, failure_probability: 0.02, rule_id: 'r1' });
  });

  it('counts each route on the side it took, into the row at each flush', () => {
    const tables = new SharedTables();
    const rule = liveRule(tables, 'r1'); // share 0.9
    expect(pickSide(tables, cacheOf(rule), 0.89)).toBe(0);
    expect(pickSide(tables, cacheOf(rule), 0.9)).toBe(1);
    expect(pickSide(tables, cacheOf(rule), 0.95)).toBe(1);
    const seg = ruleSegment(tables.ruleSegs, rule.slot);
    const base = ruleIndex(rule.slot) * RULE_F64_STRIDE + RF_ROUTED;
    const row = () => [seg.ruleF64[base], seg.ruleF64[base + 1]];
    expect(row()).toEqual([0, 0]); // counted in the rule's cache until a flush
    tables.ruleCounts.flush();
    expect(row()).toEqual([1, 2]);
    pickSide(tables, cacheOf(rule), 0.1);
    tables.ruleCounts.flush();
    tables.ruleCounts.flush(); // nothing pending: nothing added twice
    expect(row()).toEqual([2, 2]);
  });

  it('drops the routes of a rule whose slot went to another rule before the flush', () => {
    const tables = new SharedTables();
    const gone = liveRule(tables, 'gone');
    pickSide(tables, cacheOf(gone), 0.1);
    pickSide(tables, cacheOf(gone), 0.1);
    tables.freeRule(gone.slot);
    const next = liveRule(tables, 'next'); // the same slot, a new generation
    expect(next.slot).toBe(gone.slot);
    pickSide(tables, cacheOf(next), 0.95);
    tables.ruleCounts.flush();
    const seg = ruleSegment(tables.ruleSegs, next.slot);
    const base = ruleIndex(next.slot) * RULE_F64_STRIDE + RF_ROUTED;
    expect([seg.ruleF64[base], seg.ruleF64[base + 1]]).toEqual([0, 1]);
  });

  it('reads the rule\'s rows again only once a publish moved its segment\'s epoch, and at once then', () => {
    const tables = new SharedTables();
    const rule = liveRule(tables, 'r1'); // share 0.9
    const other = liveRule(tables, 'r2'); // the same segment
    const seg = ruleSegment(tables.ruleSegs, rule.slot);
    expect(pickSide(tables, cacheOf(rule), 0.5)).toBe(0);
    // A write that bypasses publishDecision moves no epoch: the cached share stands.
    seg.ruleF64[ruleIndex(rule.slot) * RULE_F64_STRIDE + RF_PRIMARY_SHARE] = 0.1;
    expect(pickSide(tables, cacheOf(rule), 0.5)).toBe(0);
    // A publish into any rule of the segment moves it: the next route reads the rows.
    publishDecision(ruleSegment(tables.ruleSegs, other.slot), ruleIndex(other.slot), { primaryShare: 0.5, source: DecisionSource.Rules, failProbPrimary: Number.NaN, failProbSecondary: Number.NaN });
    expect(pickSide(tables, cacheOf(rule), 0.5)).toBe(1);
    // An override moves no epoch: applyOverride sends the next route to the rows itself.
    applyOverride(rule, { primaryShare: 1, record: {} as never });
    expect(pickSide(tables, cacheOf(rule), 0.5)).toBe(0);
    expect(JSON.parse(routeReplyBytes(cacheOf(rule), 0, false).toString())).toMatchObject({ weight: 1, decision_source: 'rules' });
    applyOverride(rule, null);
    expect(pickSide(tables, cacheOf(rule), 0.5)).toBe(1);
  });

  it('are what the tenant\'s trie answers: one cache per rule, and a route reads nothing of the rule itself', () => {
    const tables = new SharedTables();
    const tenant = new Tenant('t', settingsForTier(1, false));
    let reads = 0;
    const plain = liveRule(tables, 'r1');
    plain.record.attributes = ['US', 'USD', '*', '*', '*', '*'];
    // Counts every read of the LiveRule's fields once it is in the trie.
    const rule = new Proxy(plain, { get: (t, k, r) => (reads++, Reflect.get(t, k, r)) });
    tenant.addRule(rule);
    const body = (country: string, card: string) => ({ country, currency: 'USD', amount: 10, card_type: card }) as never;
    const first = matchRoute(tenant, body('US', 'visa'))!;
    expect(first.rule).toBe(rule);
    expect(matchRoute(tenant, body('US', 'mastercard'))).toBe(first); // another tuple, the same rule: the same cache
    routeReplyBytes(first, pickSide(tables, first, 0.5), false); // the first route reads the override
    reads = 0;
    for (let i = 0; i < 100; i++) {
      const route = matchRoute(tenant, body('US', i % 2 ? 'visa' : 'mastercard'))!;
      expect(JSON.parse(routeReplyBytes(route, pickSide(tables, route, i / 100), false).toString()).rule_id).toBe('r1');
    }
    expect(reads).toBe(0);
    expect(matchRoute(tenant, body('FR', 'visa'))).toBeUndefined();
  });
});
