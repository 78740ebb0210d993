import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DataDirLock, DataDirLockedError, LOCK_FILE } from '../../src/store/data-dir-lock.js';

const dirs: string[] = [];
const dir = () => {
  const d = mkdtempSync(join(tmpdir(), 'dirlock-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** The start time /proc reports for `pid` (field 22 of its stat line). */
const startOf = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
};

describe('data directory lock', () => {
  it('is exclusive while held, names the holder, and is free again once released', () => {
    const d = dir();
    const lock = DataDirLock.acquire(d);
    expect(readFileSync(join(d, LOCK_FILE), 'utf8')).toBe(`${process.pid} ${startOf(process.pid)}\n`);
    // Another process's view: a live holder that is not us.
    writeFileSync(join(d, LOCK_FILE), `${process.ppid} ${startOf(process.ppid)}\n`);
    let err: unknown;
    try {
      DataDirLock.acquire(d);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(DataDirLockedError);
    expect((err as Error).message).toContain(`data directory ${d} is in use by another service process (pid ${process.ppid})`);
    // release() leaves a lock that is no longer ours alone.
    lock.release();
    expect(readFileSync(join(d, LOCK_FILE), 'utf8')).toContain(String(process.ppid));
  });

  it('takes over a stale lock: dead pid, reused pid (other start time), garbage', () => {
    for (const stale of ['999999 1\n', `${process.ppid} 1\n`, 'not a pid', '']) {
      const d = dir();
      writeFileSync(join(d, LOCK_FILE), stale);
      const lock = DataDirLock.acquire(d);
      expect(readFileSync(join(d, LOCK_FILE), 'utf8')).toMatch(new RegExp(`^${process.pid} `));
      lock.release();
      expect(() => readFileSync(join(d, LOCK_FILE))).toThrow();
    }
  });
});
