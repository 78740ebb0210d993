import { describe, expect, it } from 'vitest';
import { DEFAULT_TIER1_CONFIG, FAST_PATH_RUN, resolveTier1Config } from '../../src/tiers/tier1/config.js';

describe('Tier 1 config', () => {
  it('defaults are valid and frozen', () => {
    const c = resolveTier1Config();
    expect(c).toEqual(DEFAULT_TIER1_CONFIG);
    expect(Object.isFrozen(c)).toBe(true);
    expect(Object.isFrozen(c.horizonsMs)).toBe(true);
    expect(Object.isFrozen(c.watchHorizonsMs)).toBe(true);
    expect(c.runLength).toBe(FAST_PATH_RUN);
  });

  it('overlays overrides', () => {
    const c = resolveTier1Config({ failoverThreshold: 0.5, horizonsMs: [10_000, 30_000] });
    expect(c.failoverThreshold).toBe(0.5);
    expect(c.horizonsMs).toEqual([10_000, 30_000]);
    expect(c.degradeThreshold).toBe(DEFAULT_TIER1_CONFIG.degradeThreshold);
  });

  it.each([
    [{ degradeThreshold: 0 }, 'degradeThreshold'],
    [{ failoverThreshold: 0.1 }, 'failoverThreshold'], // below the degradation threshold
    [{ recoveryThreshold: 0.4 }, 'recoveryThreshold'], // above the failover threshold
    [{ degradeConfidence: NaN }, 'degradeConfidence'],
    [{ horizonsMs: [15_000, 5_000] }, 'horizonsMs'],
    [{ horizonsMs: [120_000] }, 'horizonsMs'], // longer than the window holds
    [{ runLength: FAST_PATH_RUN - 1 }, 'runLength'], // the fast path could not act on it
    [{ probeShare: 0.05 }, 'probeShare'], // probes are at most 2% of traffic
    [{ latencyExitFactor: 4 }, 'latencyExitFactor'],
    [{ minSamples: 2.5 }, 'minSamples'],
    [{ watchMs: -1 }, 'watchMs'],
    [{ watchHorizonsMs: [8_000, 2_000] }, 'watchHorizonsMs'],
    [{ watchHorizonsMs: [] }, 'watchHorizonsMs'],
    [{ watchMinSamples: 0 }, 'watchMinSamples'],
    [{ recoveryHoldMs: -1 }, 'recoveryHoldMs'],
    [{ recoveryHoldMs: Infinity }, 'recoveryHoldMs'],
    [{ recoveryHoldShare: 0 }, 'recoveryHoldShare'],
    [{ recoveryHoldShare: 1.5 }, 'recoveryHoldShare'],
    [{ recoveryHoldShare: NaN }, 'recoveryHoldShare'],
  ])('rejects %o naming the field', (overrides, field) => {
    expect(() => resolveTier1Config(overrides)).toThrow(new RangeError(`invalid tier1 config: ${field}`));
  });
});
