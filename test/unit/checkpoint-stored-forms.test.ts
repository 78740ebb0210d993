/**
 * Engine checkpoints are written as the bytes of their values (storedCheckpoint) and read back
 * in the form each store returns them (bytes; LMDB's may be a view of a buffer it reuses), and
 * checkpoints written by earlier versions are plain number arrays. Each restores the same
 * values, NaN and infinities included.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CHECKPOINT_LENGTH, checkpointValues, restoreRule, snapshotRule, storedCheckpoint, type StoredCheckpoint } from '../../src/engine/checkpoint.js';
import { PF_P95_LATENCY, PF_STATUS, PF_SUCCESS_RATE } from '../../src/shm/layout.js';
import { processorRowOffset } from '../../src/shm/slots.js';
import { SharedTables } from '../../src/shm/tables.js';
import { LmdbStore } from '../../src/store/lmdb-store.js';
import { decodeValue, encodeValue } from '../../src/store/postgres/codec.js';

/** A rule's snapshot with values of every kind a checkpoint holds. */
function snapshot(): { tables: SharedTables; slot: number; snap: Float64Array } {
  const tables = new SharedTables();
  const slot = tables.allocRule(0.9, false);
  const row = processorRowOffset(slot, 0);
  const f = tables.ruleSegs[0].procF64;
  f[row + PF_STATUS] = 2;
  f[row + PF_SUCCESS_RATE] = 0.123456789;
  f[row + PF_P95_LATENCY] = NaN;
  f[processorRowOffset(slot, 1) + PF_P95_LATENCY] = Infinity;
  return { tables, slot, snap: snapshotRule(tables, slot) };
}

const same = (a: Float64Array | null, b: Float64Array) => {
  expect(a).not.toBeNull();
  expect(a).toHaveLength(CHECKPOINT_LENGTH);
  // Object.is: NaN equals NaN, and -0 is not 0.
  for (let i = 0; i < b.length; i++) expect(Object.is(a![i], b[i]), `value ${i}`).toBe(true);
};

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('stored engine checkpoints', () => {
  it('reads each stored form: the bytes, a plain array of an earlier version', () => {
    const { snap } = snapshot();
    same(checkpointValues(storedCheckpoint(snap)), snap);
    same(checkpointValues(Array.from(snap)), snap);
    // Bytes at an odd offset of a larger buffer (how a decoder may hand them out).
    const padded = new Uint8Array(snap.byteLength + 3);
    padded.set(new Uint8Array(snap.buffer), 3);
    same(checkpointValues(padded.subarray(3)), snap);
    // A copy: restoring never aliases the stored value.
    const bytes = storedCheckpoint(snap);
    const copy = checkpointValues(bytes)!;
    copy[1] = -1;
    expect(checkpointValues(bytes)![1]).toBe(snap[1]);
  });

  it('refuses bytes that are not whole values and values of another kind', () => {
    expect(checkpointValues(new Uint8Array(CHECKPOINT_LENGTH * 8 - 1))).toBeNull();
    expect(checkpointValues({ length: CHECKPOINT_LENGTH } as unknown as StoredCheckpoint)).toBeNull();
    expect(checkpointValues('x' as unknown as StoredCheckpoint)).toBeNull();
  });

  it('round-trips through LMDB, and an old plain-array checkpoint still restores', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ckpt-forms-'));
    dirs.push(dir);
    const { snap } = snapshot();
    const store = new LmdbStore(dir);
    const c = store.collection<StoredCheckpoint>('engine_state', { announce: false });
    await c.put('t', 'new', storedCheckpoint(snap));
    await c.put('t', 'old', Array.from(snap));
    await store.close();

    const reopened = new LmdbStore(dir);
    const c2 = reopened.collection<StoredCheckpoint>('engine_state', { announce: false });
    for (const id of ['new', 'old']) {
      const stored = c2.get('t', id)!;
      if (id === 'new') expect(stored).toBeInstanceOf(Uint8Array);
      else expect(Array.isArray(stored)).toBe(true);
      const values = checkpointValues(stored);
      c2.get('t', id === 'new' ? 'old' : 'new'); // a second read may reuse LMDB's buffer: the values were copied
      same(values, snap);
      const fresh = new SharedTables();
      const slot = fresh.allocRule(0.9, false);
      expect(restoreRule(fresh, slot, values!)).toBe(true);
      same(snapshotRule(fresh, slot), snap);
    }
    await reopened.close();
  });

  it('writes the same bytes with the store\'s `bytes` option (without msgpackr) as without it, both ways', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ckpt-bytes-'));
    dirs.push(dir);
    const { snap } = snapshot();
    // As the engine opens it (bytes: true) and as the versions before the option did.
    const store = new LmdbStore(dir);
    const withOption = store.collection<StoredCheckpoint>('engine_state', { announce: false, bytes: true });
    const without = store.collection<StoredCheckpoint>('engine_state_before', { announce: false });
    const db = (c: unknown) => (c as { db: { encoder: { encode: (...a: unknown[]) => unknown }; getBinary(k: unknown): Buffer | undefined } }).db;
    let encoded = 0;
    const encoder = db(withOption).encoder;
    const encode = encoder.encode;
    encoder.encode = (...a: unknown[]) => {
      encoded++;
      return encode.apply(encoder, a);
    };
    await withOption.put('t', 'r', storedCheckpoint(snap));
    await store.atomic((b) => b.put(withOption, 't', 'a', storedCheckpoint(snap)));
    expect(encoded).toBe(0); // the option's whole point: msgpackr's encoder is not on this path
    await without.put('t', 'r', storedCheckpoint(snap));
    const raw = db(withOption).getBinary(['t', 'r'])!;
    expect(Buffer.compare(Buffer.from(raw), Buffer.from(db(without).getBinary(['t', 'r'])!))).toBe(0);
    // A value of another kind (an old plain array) still goes through the encoder.
    await withOption.put('t', 'old', Array.from(snap));
    expect(encoded).toBe(1);
    await store.close();

    const reopened = new LmdbStore(dir);
    for (const [name, opts] of [['engine_state', { bytes: true }], ['engine_state_before', { bytes: true }], ['engine_state', {}]] as const) {
      const c = reopened.collection<StoredCheckpoint>(name, { announce: false, ...opts });
      for (const id of name === 'engine_state' ? ['r', 'a', 'old'] : ['r']) same(checkpointValues(c.get('t', id)!), snap);
    }
    await reopened.close();
  });

  it("round-trips through the cluster store's codec", () => {
    const { snap } = snapshot();
    same(checkpointValues(decodeValue<StoredCheckpoint>(encodeValue(storedCheckpoint(snap)))), snap);
    same(checkpointValues(decodeValue<StoredCheckpoint>(encodeValue(Array.from(snap)))), snap);
  });
});
