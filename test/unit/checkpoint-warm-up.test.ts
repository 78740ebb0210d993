/**
 * The front thread's JIT warm-up of the checkpoint path (src/engine/checkpoint-warm-up.ts) and
 * the front thread's warm-up as a whole (src/front-warm-up.ts): the simulated checkpoints go
 * through the real writer and LMDB code into a scratch environment under the temporary
 * directory, which is removed afterwards; when no scratch environment can be made, the warm-up
 * is skipped with a warning and the service starts anyway.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { WARM_UP_ROUNDS, WARM_UP_RULES, warmUpCheckpoints } from '../../src/engine/checkpoint-warm-up.js';
import { warmUpFrontThread } from '../../src/front-warm-up.js';
import { log } from '../../src/log.js';
import { Metrics } from '../../src/metrics/registry.js';
import { settingsForTier } from '../../src/tenants/tenant.js';

let scratch: string;
let savedTmp: string | undefined;

beforeEach(() => {
  savedTmp = process.env.TMPDIR;
  scratch = mkdtempSync(join(tmpdir(), 'cp-warm-up-test-'));
  process.env.TMPDIR = scratch; // os.tmpdir() reads it at every call
});

afterEach(() => {
  if (savedTmp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmp;
  rmSync(scratch, { recursive: true, force: true });
  vi.restoreAllMocks();
});

describe('checkpoint path warm-up', () => {
  it('writes every rule with outcomes each round into a scratch store, and removes it', async () => {
    const r = await warmUpCheckpoints(settingsForTier(3, false));
    // Every fourth simulated rule has no outcomes: the writer skips it, as it does real ones.
    expect(r.writes).toBe(WARM_UP_ROUNDS * (WARM_UP_RULES - WARM_UP_RULES / 4));
    expect(r.ms).toBeGreaterThan(0);
    expect(readdirSync(scratch)).toEqual([]);
  });

  it('throws when no scratch store can be made, leaving nothing behind', async () => {
    const file = join(scratch, 'not-a-dir');
    writeFileSync(file, '');
    process.env.TMPDIR = file;
    await expect(warmUpCheckpoints(settingsForTier(3, false))).rejects.toThrow();
    expect(readdirSync(scratch)).toEqual(['not-a-dir']);
  });
});

describe('front thread warm-up', () => {
  it('renders the registry and checkpoints, and logs what it did', async () => {
    const info = vi.spyOn(log, 'info').mockImplementation(() => {});
    await warmUpFrontThread({ registry: new Metrics().registry, settings: settingsForTier(3, false), embeddedStore: true });
    const call = info.mock.calls.find(([msg]) => msg === 'front thread warmed up');
    expect(call?.[1]).toMatchObject({ registry_ms: expect.any(Number), checkpoint_ms: expect.any(Number), checkpoint_writes: WARM_UP_ROUNDS * 192 });
    expect(readdirSync(scratch)).toEqual([]);
  });

  it('leaves the checkpoint path alone in cluster mode (checkpoints do not go to LMDB there)', async () => {
    const info = vi.spyOn(log, 'info').mockImplementation(() => {});
    await warmUpFrontThread({ registry: new Metrics().registry, settings: settingsForTier(3, false), embeddedStore: false });
    const call = info.mock.calls.find(([msg]) => msg === 'front thread warmed up');
    expect(call?.[1]).toEqual({ registry_ms: expect.any(Number) });
  });

  it('a failure is a warning, not a failed start', async () => {
    const warn = vi.spyOn(log, 'warn').mockImplementation(() => {});
    const dir = join(scratch, 'gone');
    mkdirSync(dir);
    rmSync(dir, { recursive: true });
    process.env.TMPDIR = dir; // does not exist: mkdtemp fails
    await expect(warmUpFrontThread({ registry: new Metrics().registry, settings: settingsForTier(3, false), embeddedStore: true })).resolves.toBeUndefined();
    expect(warn).toHaveBeenCalledWith('front thread warm-up failed; the first cycles and scrapes compile instead', expect.objectContaining({ registry_ms: expect.any(Number), error: expect.any(String) }));
  });
});
