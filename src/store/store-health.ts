/**
 * Whether the store can take writes, learned from the writes themselves. A full disk (or a
 * full quota, or the file-size limit) is not an outage of the service: reads keep working
 * from the memory map and routing from memory, so only the affected writes fail (507) while
 * the rest of the service goes on. There is no polling: the next write that commits clears
 * the state, so writes succeed again as soon as space is freed (engine checkpoints write
 * every cycle, so the state heals within a cycle even with no client write).
 *
 * `status()` is the small reusable signal for readiness probes and gauges.
 */
import { errors, ServiceError } from '../errors.js';
import { log } from '../log.js';

/** errno values (and LMDB's MDB_MAP_FULL) that mean "no room", as opposed to a broken store. */
const NO_ROOM = new Set<number>([
  28, // ENOSPC: the file system is full
  122, // EDQUOT: the user's quota is used up
  27, // EFBIG: the file-size limit (ulimit -f) is reached
  -30792, // MDB_MAP_FULL: the map could not grow
]);

export type WriteFailureKind = 'full' | 'error';

export interface StoreStatus {
  /** The store answers reads. */
  connected: boolean;
  /** The last write committed (or none failed since start). */
  writable: boolean;
  /** The last write failed for lack of space. */
  full: boolean;
  /** Writes refused since start, by cause. */
  failedWrites: { full: number; error: number };
  /** When the current failure started (ms since epoch), or null. */
  failingSinceMs: number | null;
  /** Records that could not be decoded at start and were set aside (see quarantine). */
  quarantined: number;
  /** Cluster mode: the change feed from the other replicas. */
  feed?: { listening: boolean; remoteChangesApplied: number };
}

/** The errno of an lmdb-js write failure, if it has one (it may be nested in commitError). */
export function errnoOf(e: unknown): number | undefined {
  const code = (e as { code?: unknown })?.code;
  if (typeof code === 'number') return code;
  if (typeof code === 'string' && /^-?\d+$/.test(code)) return Number(code);
  const msg = String((e as Error)?.message ?? e);
  if (/No space left on device|ENOSPC/i.test(msg)) return 28;
  if (/MDB_MAP_FULL/.test(msg)) return -30792;
  if (/Disk quota exceeded|EDQUOT/i.test(msg)) return 122;
  if (/File too large|EFBIG/i.test(msg)) return 27;
  return undefined;
}

/**
 * Below this much free space an I/O error is taken for a full disk: LMDB reports a short
 * write (the last pages that did not fit) as EIO rather than ENOSPC.
 */
export const LOW_SPACE_BYTES = 64 * 1024 * 1024;

/**
 * Writes are refused (507) before they reach LMDB once the store's file system has less than
 * this much free: min(16 MiB, 10% of the volume). Letting LMDB itself run into ENOSPC is to be
 * avoided, not just survived: lmdb-js's native write thread has corrupted its heap after a
 * series of failed commits ("corrupted size vs. prev_size", an abort no handler can catch).
 * The reserve also leaves room for the log files and tools an operator needs to recover.
 */
export function reserveBytes(volumeBytes: number | undefined): number {
  const cap = 16 * 1024 * 1024;
  return volumeBytes === undefined ? cap : Math.min(cap, Math.floor(volumeBytes / 10));
}

/** `freeBytes` is the space left on the store's file system, if known. */
export function classifyWriteFailure(e: unknown, freeBytes?: number): WriteFailureKind {
  const n = errnoOf(e);
  if (n !== undefined && NO_ROOM.has(n)) return 'full';
  return freeBytes !== undefined && freeBytes < LOW_SPACE_BYTES ? 'full' : 'error';
}

export class StoreHealth {
  private writable = true;
  private full = false;
  private failingSinceMs: number | null = null;
  private readonly failedWrites = { full: 0, error: 0 };

  constructor(
    private readonly connected: () => boolean,
    /** Free bytes on the store's file system (undefined when unknown). */
    private readonly freeBytes: () => number | undefined,
  ) {}

  status(): StoreStatus {
    return {
      connected: this.connected(),
      writable: this.writable,
      full: this.full,
      failedWrites: { ...this.failedWrites },
      failingSinceMs: this.failingSinceMs,
      quarantined: 0, // filled in by the store
    };
  }

  committed(): void {
    if (this.writable) return;
    log.warn('store writable again', { failed_for_ms: Date.now() - (this.failingSinceMs ?? Date.now()), full: this.full });
    this.writable = true;
    this.full = false;
    this.failingSinceMs = null;
  }

  /** A write refused before reaching the store because free space is below the reserve. */
  refusedForSpace(freeBytes: number, reserve: number): ServiceError {
    return this.failed(new Error(`only ${freeBytes} bytes free on the store's volume, below the ${reserve}-byte reserve`), 'full');
  }

  /** Records a failed write and returns the catalogued error to answer it with. */
  failed(e: unknown, knownKind?: WriteFailureKind): ServiceError {
    const kind = knownKind ?? classifyWriteFailure(e, this.freeBytes());
    this.failedWrites[kind]++;
    const wasWritable = this.writable;
    this.writable = false;
    this.full = kind === 'full';
    if (wasWritable) {
      this.failingSinceMs = Date.now();
      // Once per episode: a full disk fails every write until space is freed.
      log.error(kind === 'full' ? 'store is full: writes are refused (507) until space is freed; routing continues' : 'store write failed', {
        err: String((e as Error)?.message ?? e),
        errno: errnoOf(e),
        free_bytes: this.freeBytes(),
      });
    }
    return kind === 'full' ? errors.storageFull() : errors.storageUnavailable();
  }
}
