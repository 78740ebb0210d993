/** The circuit breaker in front of every Redis command, and the table rows round trip. */
import { describe, expect, it } from 'vitest';
import { Breaker, BreakerOpenError, reconnectDelayMs } from '../../src/cluster/redis-client.js';
import { newRuleEntry } from '../../src/cluster/table-codec.js';
import { applyRuleEntry, readRuleEntry } from '../../src/cluster/table-rows.js';
import { publishDecision, readDecision } from '../../src/shm/decision.js';
import { DecisionSource, PF_BANDIT_BASE, PF_BANDIT_LEN, PF_STATUS, PF_T1_BASE, PROC_F64_STRIDE, ProcessorStatus, RULE_MASK, RULE_SHIFT } from '../../src/shm/layout.js';
import { SharedTables } from '../../src/shm/tables.js';
import { markRowsInUse, rowsInUse } from '../../src/shm/processor-rows.js';

describe('breaker', () => {
  it('opens after consecutive failures, fails fast, lets one trial through, closes on success', async () => {
    let now = 0;
    const b = new Breaker('test', { failures: 3, openMs: 100, maxOpenMs: 400, now: () => now });
    const fail = () => Promise.reject(new Error('down'));
    for (let i = 0; i < 3; i++) await expect(b.run(fail)).rejects.toThrow('down');
    expect(b.state()).toBe('open');
    let called = 0;
    await expect(b.run(async () => ++called)).rejects.toBeInstanceOf(BreakerOpenError);
    expect(called).toBe(0);
    now = 100;
    expect(b.state()).toBe('half-open');
    await expect(b.run(fail)).rejects.toThrow('down'); // failed trial: open for twice as long
    now = 250;
    expect(b.state()).toBe('open');
    now = 301;
    expect(await b.run(async () => 'ok')).toBe('ok');
    expect(b.state()).toBe('closed');
    expect(b.rejected).toBe(1);
  });

  it('reconnect delays back off and stay capped', () => {
    expect(reconnectDelayMs(0)).toBeGreaterThanOrEqual(50);
    expect(reconnectDelayMs(3)).toBeGreaterThanOrEqual(400);
    expect(reconnectDelayMs(50)).toBeLessThanOrEqual(2500);
  });
});

describe('table rows', () => {
  it('what a leader reads out of its rows, a follower writes into its own', () => {
    const leader = new SharedTables();
    const follower = new SharedTables();
    const sl = leader.allocRule(0.8, false);
    const sf = follower.allocRule(0.8, false);
    const seg = leader.ruleSegs[sl >> RULE_SHIFT];
    const i = sl & RULE_MASK;
    publishDecision(seg, i, { primaryShare: 0.05, source: DecisionSource.Prediction, failProbPrimary: 0.5, failProbSecondary: 0.25 });
    const row = i * 2 * PROC_F64_STRIDE;
    markRowsInUse(seg, sl); // as the evaluation that wrote them would
    seg.procF64[row + PF_STATUS] = ProcessorStatus.FailedOver;
    for (let j = 0; j < 12; j++) seg.procF64[row + PF_T1_BASE + j] = j + 1;
    for (let j = 0; j < PF_BANDIT_LEN; j++) seg.procF64[row + PROC_F64_STRIDE + PF_BANDIT_BASE + j] = 0.5 + j; // the secondary's arm
    const e = readRuleEntry(leader, sl, 5, newRuleEntry());
    expect(applyRuleEntry(follower, sf, e)).toBe(true);
    expect(applyRuleEntry(follower, sf, e)).toBe(false); // unchanged: no seqlock cycle
    const fseg = follower.ruleSegs[sf >> RULE_SHIFT];
    const d = readDecision(fseg, sf & RULE_MASK, { primaryShare: 0, source: DecisionSource.Rules, failProbPrimary: 0, failProbSecondary: 0 });
    expect(d).toEqual({ primaryShare: 0.05, source: DecisionSource.Prediction, failProbPrimary: 0.5, failProbSecondary: 0.25 });
    const frow = (sf & RULE_MASK) * 2 * PROC_F64_STRIDE;
    expect(fseg.procF64[frow + PF_STATUS]).toBe(ProcessorStatus.FailedOver);
    expect(Array.from(fseg.procF64.subarray(frow + PF_T1_BASE, frow + PF_T1_BASE + 12))).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    const srow = frow + PROC_F64_STRIDE;
    expect(Array.from(fseg.procF64.subarray(srow + PF_BANDIT_BASE, srow + PF_BANDIT_BASE + PF_BANDIT_LEN))).toEqual([0.5, 1.5, 2.5, 3.5, 4.5, 5.5]);
  });
});
