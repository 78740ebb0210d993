/** cachedReading (src/store/cached-reading.ts): the free-space check before LMDB writes reads statfs at most once per ttl. */
import { describe, expect, it } from 'vitest';
import { cachedReading } from '../../src/store/cached-reading.js';

describe('cachedReading', () => {
  it('reads once per ttl and reuses the value in between', () => {
    let now = 100;
    let reads = 0;
    const get = cachedReading(() => ++reads * 10, 1, () => now);
    expect(get()).toBe(10);
    now = 100.5;
    expect(get()).toBe(10);
    expect(reads).toBe(1);
    now = 101;
    expect(get()).toBe(20);
    now = 250;
    expect(get()).toBe(30);
    expect(get()).toBe(30);
    expect(reads).toBe(3);
  });

  it('caches an undefined reading too (no file system information)', () => {
    let reads = 0;
    const get = cachedReading(() => void reads++, 1000, () => 0);
    expect(get()).toBeUndefined();
    expect(get()).toBeUndefined();
    expect(reads).toBe(1);
  });
});
