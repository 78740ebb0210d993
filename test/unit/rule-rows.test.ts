import { describe, expect, it } from 'vitest';
import * as layout from '../../src/shm/layout.js';
import {
  OUTCOME_RESULTS,
  PROC_F64_STRIDE,
  PROCS_PER_RULE,
  RF_FAILPROB_SECONDARY,
  RF_PRIMARY_SHARE,
  RF_ROUTED,
  RI_SEQ,
  RI_DECISION_SOURCE,
  RULE_F64_AT,
  RULE_F64_FIELDS,
  RULE_F64_STRIDE,
  RULE_I32_FIELDS,
  RULE_I32_STRIDE,
  RULE_ROW_BYTES,
  RULES_PER_SEGMENT,
  ruleSegmentBytes,
  ruleSegmentViews,
} from '../../src/shm/layout.js';

const constants = (prefix: string) =>
  Object.entries(layout).filter(([name, v]) => name.startsWith(prefix) && typeof v === 'number') as [string, number][];

describe('rule rows: a rule\'s Int32 and Float64 fields in one row', () => {
  it('every field fits its part of the row, and the row is whole cache lines', () => {
    for (const [name, v] of constants('RI_')) expect(v, name).toBeLessThan(RULE_I32_FIELDS);
    for (const [name, v] of constants('RF_')) expect(v, name).toBeLessThan(RULE_F64_FIELDS);
    expect(layout.RF_OUTCOMES + PROCS_PER_RULE * OUTCOME_RESULTS).toBeLessThanOrEqual(RULE_F64_FIELDS);
    expect(RULE_F64_AT).toBeGreaterThanOrEqual(RULE_I32_FIELDS * 4);
    expect(RULE_F64_AT % 8).toBe(0);
    expect(RULE_F64_AT + RULE_F64_FIELDS * 8).toBeLessThanOrEqual(RULE_ROW_BYTES);
    expect(RULE_ROW_BYTES % 64).toBe(0);
  });

  it('no field of any rule shares bytes with another field, of its rule or another, or with the processor rows', () => {
    const sab = new SharedArrayBuffer(ruleSegmentBytes());
    const seg = ruleSegmentViews(sab);
    // Each field written through its own view with a value naming it, then all read back.
    for (let i = 0; i < RULES_PER_SEGMENT; i++) {
      for (let f = 0; f < RULE_I32_FIELDS; f++) seg.ruleI32[i * RULE_I32_STRIDE + f] = i * 100 + f;
      for (let f = 0; f < RULE_F64_FIELDS; f++) seg.ruleF64[i * RULE_F64_STRIDE + f] = i * 100 + f + 0.5;
    }
    seg.procF64.fill(-1);
    for (let i = 0; i < RULES_PER_SEGMENT; i++) {
      for (let f = 0; f < RULE_I32_FIELDS; f++) expect(seg.ruleI32[i * RULE_I32_STRIDE + f]).toBe(i * 100 + f);
      for (let f = 0; f < RULE_F64_FIELDS; f++) expect(seg.ruleF64[i * RULE_F64_STRIDE + f]).toBe(i * 100 + f + 0.5);
    }
    expect(seg.procF64.length).toBe(RULES_PER_SEGMENT * PROCS_PER_RULE * PROC_F64_STRIDE);
    expect(seg.procF64.byteOffset + seg.procF64.byteLength).toBe(sab.byteLength);
  });

  it("a route's fields (seqlock, source, share, probabilities, traffic counter) lie in the first two cache lines of one row", () => {
    const seg = ruleSegmentViews(new SharedArrayBuffer(ruleSegmentBytes()));
    for (const i of [0, 1, 21, 1023]) {
      const row = i * RULE_ROW_BYTES;
      const bytes = [
        seg.ruleI32.byteOffset + (i * RULE_I32_STRIDE + RI_SEQ) * 4,
        seg.ruleI32.byteOffset + (i * RULE_I32_STRIDE + RI_DECISION_SOURCE) * 4,
        seg.ruleF64.byteOffset + (i * RULE_F64_STRIDE + RF_PRIMARY_SHARE) * 8,
        seg.ruleF64.byteOffset + (i * RULE_F64_STRIDE + RF_FAILPROB_SECONDARY) * 8,
        seg.ruleF64.byteOffset + (i * RULE_F64_STRIDE + RF_ROUTED + 1) * 8,
      ];
      for (const b of bytes) {
        expect(b).toBeGreaterThanOrEqual(row);
        expect(b + 8).toBeLessThanOrEqual(row + 128);
      }
    }
  });
});
