/**
 * Child-process check of an LMDB store (see store-files.ts): opens it read-only and reads
 * every key and value of every named database, so that a damaged page kills this process
 * (SIGBUS, SIGSEGV) or fails it with an error, never the service. Exit 0: every page read.
 *
 *   node store-probe.js <data dir>
 */
import { open } from 'lmdb';

function main(dir: string): void {
  const root = open({ path: dir, noSubdir: false, readOnly: true, maxDbs: 256, keyEncoding: 'binary', encoding: 'binary' });
  let records = 0;
  const names: string[] = [];
  for (const { key } of root.getRange({})) names.push((key as Buffer).toString("utf8").replace(/\0+$/, ""));
  // A garbage root page can read as an empty main database: its count in the meta page tells.
  const mainExpected = (root.getStats() as { entryCount: number }).entryCount;
  if (names.length !== mainExpected) throw new Error(`the main database lists ${mainExpected} entries but only ${names.length} could be read`);
  for (const name of names) {
    let db;
    try {
      db = root.openDB({ name, keyEncoding: 'binary', encoding: 'binary' });
    } catch {
      continue; // a plain entry of the main database, not a named database
    }
    let n = 0;
    for (const { value } of db.getRange({})) {
      if ((value as Buffer | undefined)?.length !== undefined) n++;
    }
    // A garbage branch or leaf page can end a walk early without any error: the count kept in
    // the database's own header tells.
    const expected = (db.getStats() as { entryCount: number }).entryCount;
    if (n !== expected) throw new Error(`database "${name}" lists ${expected} records but only ${n} could be read`);
    records += n;
  }
  process.stdout.write(`${names.length} databases, ${records} records read\n`);
}

try {
  main(process.argv[2]);
  process.exit(0);
} catch (e) {
  process.stderr.write(`LMDB error: ${String((e as Error)?.message ?? e)}\n`);
  process.exit(1);
}
