import { describe, expect, it } from 'vitest';
import { classifyWriteFailure, errnoOf, LOW_SPACE_BYTES, reserveBytes, StoreHealth } from '../../src/store/store-health.js';
import { ServiceError } from '../../src/errors.js';

describe('store write failures', () => {
  it('tells "no room" from other failures', () => {
    expect(classifyWriteFailure(Object.assign(new Error('No space left on device'), { code: 28 }))).toBe('full');
    expect(classifyWriteFailure(new Error('MDB_MAP_FULL: Environment mapsize limit reached'))).toBe('full');
    expect(classifyWriteFailure(Object.assign(new Error('x'), { code: 122 }))).toBe('full');
    expect(classifyWriteFailure(Object.assign(new Error('Input/output error'), { code: 5 }), 10_000_000_000)).toBe('error');
    // LMDB reports the short write of a full disk as EIO.
    expect(classifyWriteFailure(Object.assign(new Error('Input/output error'), { code: 5 }), LOW_SPACE_BYTES - 1)).toBe('full');
    expect(errnoOf(new Error('ENOSPC: no space'))).toBe(28);
  });

  it('keeps a reserve of min(16 MiB, 10% of the volume)', () => {
    expect(reserveBytes(2 * 1024 * 1024)).toBe(Math.floor((2 * 1024 * 1024) / 10));
    expect(reserveBytes(1e12)).toBe(16 * 1024 * 1024);
    expect(reserveBytes(undefined)).toBe(16 * 1024 * 1024);
  });

  it('tracks the state: full on a refused write, writable again on the next commit', () => {
    const h = new StoreHealth(() => true, () => 0);
    expect(h.status()).toMatchObject({ writable: true, full: false });
    const err = h.failed(Object.assign(new Error('No space left on device'), { code: 28 }));
    expect(err).toBeInstanceOf(ServiceError);
    expect(err.status).toBe(507);
    expect(err.code).toBe('STORAGE_FULL');
    expect(h.status()).toMatchObject({ writable: false, full: true, failedWrites: { full: 1, error: 0 } });
    expect(h.failed(new Error('boom'), 'error').status).toBe(503);
    expect(h.status()).toMatchObject({ full: false, failedWrites: { full: 1, error: 1 } });
    h.committed();
    expect(h.status()).toMatchObject({ writable: true, full: false, failingSinceMs: null });
  });
});
