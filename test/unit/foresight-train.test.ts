/**
 * The training pipeline end to end on the tiny data set (CI time): simulator traces through
 * the real engine, Tier 1 labels, TensorFlow.js training, Platt calibration, held-out metrics
 * and a model file the service's loader accepts.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { train } from '../../bench/train/train.js';
import { loadModel, type ForesightModelJson } from '../../src/tiers/foresight/model.js';

const dir = mkdtempSync(join(tmpdir(), 'foresight-train-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('npm run train -- --tiny runs end to end and writes a loadable, reproducible model', async () => {
  const out = join(dir, 'tiny.json');
  const t0 = performance.now();
  const res = await train({ seed: 7, tiny: true, out, log: () => {} });
  expect((performance.now() - t0) / 1000).toBeLessThan(60);
  const model = loadModel(out);
  expect(model.units).toBe(8);
  const json = JSON.parse(readFileSync(out, 'utf8')) as ForesightModelJson;
  expect(json.meta?.mode).toBe('tiny');
  for (const v of [res.test.prAucGru, res.test.prAucTrend, res.test.ece, res.test.brier]) expect(Number.isFinite(v)).toBe(true);
  expect(res.test.positives).toBeGreaterThan(0);

  // Same seed, same model: the pipeline is reproducible.
  const again = join(dir, 'tiny-again.json');
  await train({ seed: 7, tiny: true, out: again, log: () => {} });
  expect(readFileSync(again, 'utf8')).toBe(readFileSync(out, 'utf8'));
}, 120_000);
