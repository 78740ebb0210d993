/**
 * One process per data directory. LMDB lets several processes open one environment, but two
 * engines on one SERVICE_DATA_DIR would each keep their own in-memory state and overwrite
 * each other's checkpoints: acknowledged writes would be lost. So the service takes an
 * exclusive lock first: the file `service.lock` in the directory, created exclusively
 * (O_EXCL) and holding the holder's pid and its process start time.
 *
 * A lock whose holder is gone (killed, crashed) is taken over: the holder counts as gone when
 * no process has its pid, or the process with that pid started at another time (pid reused,
 * e.g. a container restart), or it is a zombie. Released at stop and on process exit.
 */
import { closeSync, linkSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { StartupError } from '../startup-error.js';

export const LOCK_FILE = 'service.lock';

export class DataDirLockedError extends StartupError {
  constructor(
    readonly dataDir: string,
    readonly holderPid: number,
  ) {
    super(`data directory ${dataDir} is in use by another service process (pid ${holderPid}); stop it or choose another SERVICE_DATA_DIR`);
  }
}

interface Holder {
  pid: number;
  /** Process start time (clock ticks since boot, /proc/<pid>/stat field 22); '' where unknown. */
  startedAt: string;
}

/** The start time of process `pid` as Linux reports it, '' when unknown; null when it is not running (or a zombie). */
function processStart(pid: number): string | null {
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return null;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): state is the 1st, starttime the 20th.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (rest[0] === 'Z' || rest[0] === 'X') return null;
    return rest[19] ?? '';
  } catch {
    return ''; // no /proc (not Linux): the pid alone decides
  }
}

function parseHolder(text: string): Holder | null {
  const m = /^(\d+)(?: (\d*))?\n?$/.exec(text);
  return m ? { pid: Number(m[1]), startedAt: m[2] ?? '' } : null;
}

function holderAlive(h: Holder): boolean {
  if (h.pid === process.pid) return false; // our own pid from an earlier life (container pid 1)
  const started = processStart(h.pid);
  if (started === null) return false;
  return h.startedAt === '' || started === '' || started === h.startedAt;
}

export class DataDirLock {
  private released = false;
  private readonly onExit = () => this.release();

  private constructor(
    readonly path: string,
    private readonly content: string,
  ) {
    process.once('exit', this.onExit);
  }

  /** Takes the lock on `dataDir` (created if missing), or throws DataDirLockedError naming the holder. */
  static acquire(dataDir: string): DataDirLock {
    const dir = resolve(dataDir);
    mkdirSync(dir, { recursive: true });
    const path = join(dir, LOCK_FILE);
    const content = `${process.pid} ${processStart(process.pid) ?? ''}\n`;
    for (let attempt = 0; attempt < 50; attempt++) {
      // Written to a private file first and linked into place: the lock file is never seen half-written.
      const mine = `${path}.${process.pid}`;
      const fd = openSync(mine, 'w');
      writeSync(fd, content);
      closeSync(fd);
      try {
        linkSync(mine, path);
        return new DataDirLock(path, content);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      } finally {
        unlinkSync(mine);
      }
      let holder: Holder | null = null;
      try {
        holder = parseHolder(readFileSync(path, 'utf8'));
      } catch {
        continue; // released meanwhile: try again
      }
      if (holder !== null && holderAlive(holder)) throw new DataDirLockedError(dir, holder.pid);
      // A stale lock. Move it aside under a private name (only one of several processes
      // doing this at once gets that inode), then check that what was moved is still stale.
      const aside = `${path}.stale.${process.pid}`;
      try {
        renameSync(path, aside);
      } catch {
        continue;
      }
      const moved = parseHolder(readFileSync(aside, 'utf8'));
      if (moved !== null && holderAlive(moved)) {
        // Another process took the lock over between our read and our rename: put it back.
        try {
          linkSync(aside, path);
        } finally {
          unlinkSync(aside);
        }
        throw new DataDirLockedError(dir, moved.pid);
      }
      unlinkSync(aside);
    }
    throw new Error(`could not take the lock ${path}`);
  }

  /** Removes the lock file if it is still ours. Idempotent. */
  release(): void {
    if (this.released) return;
    this.released = true;
    process.removeListener('exit', this.onExit);
    try {
      if (readFileSync(this.path, 'utf8') === this.content) unlinkSync(this.path);
    } catch {
      // already gone
    }
  }
}
