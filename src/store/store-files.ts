/**
 * Checks of the LMDB files before the store is mapped. A damaged file must stop the start
 * with a message, not a signal: mapping a truncated data.mdb and touching a page past its end
 * is SIGBUS, and a garbage page is SIGSEGV, which no handler in the process can turn into a
 * message. And a store that existed and is gone must not come up empty (every route a 404)
 * as if this were a first start.
 *
 *   data dir/
 *     data.mdb            LMDB data file (checked: size, both meta pages, last page in file)
 *     lock.mdb            LMDB reader table (recreated at will)
 *     store-created.json  written once the store opened: "a store lives here" (the marker)
 *
 * Then `verifyInChildProcess` opens the store in a child process and reads every record of
 * every database; a child that dies of a signal or fails means a damaged file, reported
 * without the parent ever mapping it.
 *
 * SERVICE_STORE_START_FRESH=true moves the damaged files aside (renamed, never deleted) and
 * starts with an empty store.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { StartupError } from '../startup-error.js';

export const DATA_FILE = 'data.mdb';
/** LMDB's own reader table (not the service's data-directory lock, service.lock). */
export const LMDB_LOCK_FILE = 'lock.mdb';
export const STORE_MARKER = 'store-created.json';

const MDB_MAGIC = 0xbeefc0de;
const PAGE_SIZES = [4096, 8192, 16384, 32768, 65536];
/** Page header sizes of LMDB builds (24 with the page txnid field that lmdb-js's LMDB has, 16 in classic 0.9). */
const PAGE_HEADERS = [24, 16];

/** The start is refused: the message says what is wrong and how to recover. */
export class StoreFileError extends StartupError {
  override name = 'StoreFileError';
}

interface Meta {
  pageSize: number;
  lastPage: number;
  txnId: number;
}

/** Reads one meta page at `offset` (a page start); null when it is not a valid LMDB meta. */
function readMeta(buf: Buffer, offset: number): Meta | null {
  for (const h of PAGE_HEADERS) {
    const m = offset + h;
    if (m + 136 > buf.length) continue;
    if (buf.readUInt32LE(m) !== MDB_MAGIC) continue;
    // mm_magic u32, mm_version u32, mm_address u64, mm_mapsize u64, mm_dbs[2] (48 bytes each,
    // the first one's md_pad is the page size), mm_last_pg u64, mm_txnid u64.
    const pageSize = buf.readUInt32LE(m + 24);
    const lastPage = Number(buf.readBigUInt64LE(m + 24 + 96));
    const txnId = Number(buf.readBigUInt64LE(m + 24 + 104));
    if (!PAGE_SIZES.includes(pageSize)) continue;
    return { pageSize, lastPage, txnId };
  }
  return null;
}

/** What is wrong with `data.mdb` of `size` bytes whose first bytes are `head`; null if it looks whole. */
export function dataFileProblem(head: Buffer, size: number): string | null {
  if (size === 0) return 'is empty (0 bytes): it was truncated';
  const metas: Meta[] = [];
  const first = readMeta(head, 0);
  if (first) metas.push(first);
  for (const p of PAGE_SIZES) {
    const second = readMeta(head, p);
    if (second && second.pageSize === p) metas.push(second);
  }
  if (metas.length === 0) return 'has no valid LMDB header (both meta pages damaged or overwritten)';
  const meta = metas.reduce((a, b) => (b.txnId > a.txnId ? b : a));
  if (size % meta.pageSize !== 0) return `is ${size} bytes, not a whole number of ${meta.pageSize}-byte pages: it was truncated`;
  const needed = (meta.lastPage + 1) * meta.pageSize;
  if (size < needed) return `is ${size} bytes but its header says it holds ${needed}: it was truncated`;
  return null;
}

function readHead(path: string, bytes: number): Buffer {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(bytes);
    const n = readSync(fd, buf, 0, bytes, 0);
    return buf.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

const RECOVERY =
  'Restore the data directory from a backup (stop the service, replace the files, start), or set ' +
  'SERVICE_STORE_START_FRESH=true to move the damaged files aside and start with an empty store (see README, "Store recovery").';

/** Renames the store's files to `<name>.damaged-<time>`; they are never deleted. */
function moveAside(dir: string, reason: string): string[] {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const moved: string[] = [];
  for (const f of [DATA_FILE, LMDB_LOCK_FILE]) {
    const p = join(dir, f);
    if (!existsSync(p)) continue;
    const to = `${p}.damaged-${stamp}`;
    renameSync(p, to);
    moved.push(to);
  }
  rmSync(join(dir, STORE_MARKER), { force: true });
  writeFileSync(join(dir, `start-fresh-${stamp}.txt`), `${reason}\nmoved aside: ${moved.join(', ') || 'nothing'}\n`);
  return moved;
}

export interface StoreFileCheck {
  /** A store existed here before this start. */
  existed: boolean;
  /** Files moved aside because SERVICE_STORE_START_FRESH was set (empty when none). */
  movedAside: string[];
  /** Why they were moved aside, if they were. */
  reason: string | null;
}

/**
 * Checks the files of the store in `dir` (which exists). Throws StoreFileError when the start
 * must be refused; with `startFresh`, moves a damaged or orphaned store aside instead.
 */
export function checkStoreFiles(dir: string, startFresh: boolean): StoreFileCheck {
  const data = join(dir, DATA_FILE);
  const marker = existsSync(join(dir, STORE_MARKER));
  let problem: string | null = null;
  if (!existsSync(data)) {
    if (!marker && !existsSync(join(dir, LMDB_LOCK_FILE))) return { existed: false, movedAside: [], reason: null };
    problem = `${DATA_FILE} is missing from ${dir}, which held a store (${marker ? STORE_MARKER : LMDB_LOCK_FILE} is there)`;
  } else {
    const size = statSync(data).size;
    const fileProblem = dataFileProblem(readHead(data, 2 * 65536 + 4096), size);
    if (fileProblem) problem = `${data} ${fileProblem}`;
    else {
      const deep = verifyInChildProcess(dir);
      if (deep) problem = `${data} is damaged: ${deep}`;
    }
  }
  if (problem === null) return { existed: true, movedAside: [], reason: null };
  if (!startFresh) throw new StoreFileError(`refusing to start: ${problem}. ${RECOVERY}`);
  return { existed: true, movedAside: moveAside(dir, problem), reason: problem };
}

/** Records that the store in `dir` exists, so that its disappearance is noticed. */
export function markStoreCreated(dir: string): void {
  const p = join(dir, STORE_MARKER);
  if (existsSync(p)) return;
  writeFileSync(p, JSON.stringify({ created_at: new Date().toISOString(), note: `the LMDB store (${DATA_FILE}) of this service lives here` }) + '\n');
}

const PROBE = fileURLToPath(new URL('./store-probe.js', import.meta.url));

/**
 * Signals that stop processes rather than report a fault. A terminal's Ctrl-C, systemd's stop
 * (KillMode=control-group) and `kill -- -<pgid>` send them to the check process too, which then
 * says nothing about the file: taken for damage, a stop during start-up refused a sound store
 * (exit 3) or, with SERVICE_STORE_START_FRESH, moved it aside.
 */
const STOP_SIGNALS = new Set(['SIGTERM', 'SIGINT', 'SIGHUP']);
/** Check runs before a check that keeps being stopped is given up (a start-up error, not damage). */
const PROBE_RUNS = 3;

/**
 * Opens the store read-only in a child process that reads every record; returns what went
 * wrong (a signal, an error), or null when every page could be read. A check stopped by a
 * stop signal is run again; one stopped every time throws a StartupError.
 */
export function verifyInChildProcess(dir: string): string | null {
  for (let run = 1; ; run++) {
    const r = spawnSync(process.execPath, [PROBE, dir], { encoding: 'utf8', timeout: 120_000, stdio: ['ignore', 'pipe', 'pipe'] });
    if (r.error) return `the check could not run (${r.error.message})`;
    if (r.signal && STOP_SIGNALS.has(r.signal)) {
      if (run < PROBE_RUNS) continue;
      throw new StartupError(`the check of the store in ${dir} was stopped by ${r.signal} ${PROBE_RUNS} times; the store was not found damaged`);
    }
    if (r.signal) return `reading it killed a check process with ${r.signal} (a page is unreadable or past the end of the file)`;
    if (r.status !== 0) return (r.stderr || r.stdout || `check exited with ${r.status}`).trim().split('\n').slice(-1)[0];
    return null;
  }
}
