/**
 * Reading past records that cannot be decoded. One undecodable value (a torn write from an
 * older build, a bit flip, a record of a format this version does not know) used to stop the
 * whole start, because a range read throws at it. A forward range read here logs the key,
 * sets the record aside (its raw bytes moved to the `_quarantine` database, keyed by database
 * name and key, so an operator can inspect or restore it; nothing is deleted) and goes on
 * with the next record.
 */
import type { Database, RootDatabase } from 'lmdb';
import { log } from '../log.js';

type Key = (string | number)[];
type AnyDb = Database<unknown, Key>;

export const QUARANTINE_DB = '_quarantine';

export interface RangeOptions {
  start?: Key;
  end?: Key;
}

export class Quarantine {
  private readonly db: Database<Buffer, Key>;
  private readonly seen = new Set<string>();
  count = 0;

  constructor(
    root: RootDatabase,
    /** Called with each write that sets a record aside (the store tracks and guards it). */
    private readonly write: (fn: () => Promise<unknown>) => void,
  ) {
    this.db = root.openDB({ name: QUARANTINE_DB, encoding: 'binary' }) as unknown as Database<Buffer, Key>;
  }

  /** Like `db.getRange(opts)`, skipping (and setting aside) records whose value cannot be decoded. */
  *range(name: string, db: AnyDb, opts: RangeOptions): Generator<{ key: Key; value: unknown }> {
    let start = opts.start;
    let after: Key | null = null; // the last key yielded or skipped: resume strictly after it
    for (;;) {
      try {
        for (const e of db.getRange({ start, end: opts.end })) {
          if (after !== null && sameKey(e.key as Key, after)) continue;
          after = e.key as Key;
          yield e as { key: Key; value: unknown };
        }
        return;
      } catch (err) {
        // The read failed on the record right after the last one yielded.
        const bad = this.nextKey(db, start, opts.end, after);
        if (bad === null) throw err; // not a decoding problem of one record
        this.setAside(name, db, bad, err);
        const next = this.nextKey(db, bad, opts.end, bad);
        if (next === null) return;
        start = next;
        after = null;
      }
    }
  }

  private nextKey(db: AnyDb, start: Key | undefined, end: Key | undefined, after: Key | null): Key | null {
    for (const k of db.getKeys({ start: after ?? start, end })) {
      if (after !== null && sameKey(k as Key, after)) continue;
      return k as Key;
    }
    return null;
  }

  private setAside(name: string, db: AnyDb, key: Key, err: unknown): void {
    const id = `${name}\u0000${JSON.stringify(key)}`;
    if (this.seen.has(id)) return;
    this.seen.add(id);
    this.count++;
    const raw = (db as unknown as { getBinary(k: Key): Buffer | undefined }).getBinary(key);
    log.error('undecodable record skipped and quarantined', { database: name, key, bytes: raw?.length ?? 0, err: String((err as Error)?.message ?? err) });
    if (!raw) return;
    this.write(() =>
      this.db.transaction(() => {
        this.db.putSync([name, JSON.stringify(key)], Buffer.from(raw));
        db.removeSync(key);
      }),
    );
  }
}

function sameKey(a: Key, b: Key): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
