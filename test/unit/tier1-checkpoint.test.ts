import { describe, expect, it } from 'vitest';
import { CHECKPOINT_LENGTH, restoreRule, snapshotRule } from '../../src/engine/checkpoint.js';
import { SharedTables } from '../../src/shm/tables.js';
import { Sim } from './tier1-harness.js';

describe('engine checkpoints', () => {
  it('status, Tier 1 bookkeeping and the decision survive a restart', () => {
    const s = new Sim({ seed: 3 });
    s.run(90_000, { rate: 20, model: (k, t) => ({ err: k === 0 && t >= 60_000 ? 1 : 0.01 }) });
    expect(s.status(0)).toBe('failed_over');
    const snap = snapshotRule(s.tables, s.slot);
    expect(snap).toHaveLength(CHECKPOINT_LENGTH);

    // A fresh process: new tables, the rule re-created from the store, then restored.
    const s2 = new Sim({ seed: 4 });
    expect(restoreRule(s2.tables, s2.slot, snap)).toBe(true);
    expect(s2.status(0)).toBe('failed_over');
    expect(s2.share()).toBe(s.share());
    expect(s2.state(0)).toEqual(s.state(0));
    expect(Array.from(snapshotRule(s2.tables, s2.slot))).toEqual(Array.from(snap));
  });

  it('refuses a snapshot of another version or length', () => {
    const t = new SharedTables();
    const slot = t.allocRule(0.9, false);
    const bad = snapshotRule(t, slot);
    bad[0] = 999;
    expect(restoreRule(t, slot, bad)).toBe(false);
    expect(restoreRule(t, slot, new Float64Array(3))).toBe(false);
  });
});
