/**
 * The stored form of a rule record in the embedded store (src/rules/stored-rule.ts): values in
 * a fixed order without their field names, read back as the same record; a record stored in the
 * object form (earlier versions, tools that seed a data directory) is read as it is, and the
 * unique-attributes check sees both forms.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RULE_FORM_V1, storedRule } from '../../src/rules/stored-rule.js';
import { LmdbStore } from '../../src/store/lmdb-store.js';
import { StoreConflict } from '../../src/store/store.js';
import type { RuleRecord } from '../../src/tenants/tenant.js';

const record = (id: string, country = 'TN', updated?: string): RuleRecord => ({
  rule_id: id,
  attributes: [country, 'SEK', 'bnpl', 'amex', 'recurring', 'micro'],
  primary_id: 'psp_0',
  primary_name: 'PSP 0',
  secondary_id: 'psp_1',
  secondary_name: 'PSP 1',
  primary_weight: 0.9,
  created_at: '2026-11-28T22:01:24.738Z',
  ...(updated !== undefined && { updated_at: updated }),
});

const stores: LmdbStore[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function rulesCollection() {
  const dir = mkdtempSync(join(tmpdir(), 'stored-rule-'));
  dirs.push(dir);
  const store = new LmdbStore(dir);
  stores.push(store);
  const c = store.collection<RuleRecord>('rules', { uniqueBy: (r) => r.attributes.join('\u0000'), storedForm: storedRule });
  // The database under the collection, to see and write what is stored.
  const db = (c as unknown as { db: { get(k: unknown): unknown; getBinary(k: unknown): Uint8Array; put(k: unknown, v: unknown): Promise<boolean> } }).db;
  return { store, c, db };
}

describe('storedRule', () => {
  it('round-trips a record, with and without updated_at, keeping the field order', () => {
    for (const r of [record('a'), record('b', 'FR', '2026-11-29T00:00:00.000Z')]) {
      const back = storedRule.fromStored(storedRule.toStored(r));
      expect(back).toEqual(r);
      expect(Object.keys(back)).toEqual(Object.keys(r));
    }
    expect((storedRule.toStored(record('a')) as unknown[])[0]).toBe(RULE_FORM_V1);
  });

  it('passes a record in the object form, or anything else, through as it is', () => {
    const r = record('a');
    expect(storedRule.fromStored(r)).toBe(r);
    expect(storedRule.fromStored('junk')).toBe('junk');
    expect(storedRule.fromStored([9, 'x'])).toEqual([9, 'x']);
  });
});

describe('rules in the embedded store', () => {
  it('are written in the stored form (half the bytes) and read back as records, by get, list, listAll and atomic writes', async () => {
    const { store, c, db } = rulesCollection();
    await c.insert('t', 'a', record('a'));
    await store.atomic((b) => b.insert(c, 't', 'b', record('b', 'FR', '2026-11-29T00:00:00.000Z')));
    expect(Array.isArray(db.get(['t', 'a']))).toBe(true);
    expect(db.getBinary(['t', 'a']).length).toBeLessThan(120); // 204 bytes in the object form
    expect(c.get('t', 'a')).toEqual(record('a'));
    expect([...c.list('t')].map((e) => e.value)).toEqual([record('a'), record('b', 'FR', '2026-11-29T00:00:00.000Z')]);
    expect([...c.listAll()].map((e) => e.value.rule_id)).toEqual(['a', 'b']);
  });

  it('a record stored in the object form is read as it is, and holds its attributes against a new rule', async () => {
    const { c, db } = rulesCollection();
    await db.put(['t', 'old'], record('old', 'DE'));
    expect(c.get('t', 'old')).toEqual(record('old', 'DE'));
    await expect(c.insert('t', 'new', record('new', 'DE'))).rejects.toBeInstanceOf(StoreConflict);
    // Rewritten (a PATCH), it is stored in the new form.
    await c.put('t', 'old', record('old', 'DE', '2026-11-29T00:00:00.000Z'));
    expect(Array.isArray(db.get(['t', 'old']))).toBe(true);
    expect(c.get('t', 'old')?.updated_at).toBe('2026-11-29T00:00:00.000Z');
    await expect(c.insert('t', 'new', record('new', 'DE'))).rejects.toBeInstanceOf(StoreConflict);
    await c.insert('t', 'new', record('new', 'NL'));
  });
});
