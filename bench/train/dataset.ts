/**
 * Which traces make up the training, calibration and held-out test sets.
 *
 * - train: every named scenario × rates 2/20/100 tx/s × `trainSeeds` seeds, incident start
 *   at 120 s plus a memoryless delay (incidentStart), the rule's primary weight in 0.6-0.95
 *   (so volume alone says nothing), plus `variants` parametric variants (scenario-spec.ts) at
 *   rates 2-100 tx/s. Training runs also get random primary-share cuts (perturb.ts). Seeds
 *   derive from the training seed.
 * - calibration (Platt fit, model selection) and test (reported metrics): the named
 *   scenarios × 2/20/100 tx/s on fixed seeds disjoint from training, incident at 120 s so the
 *   GRU has warmed up (the service runs it continuously; a processor is not born a minute
 *   before its incident), primary weight 0.9 (the onboarding default).
 */
import { deriveSeed, Rng } from '../sim/rng.js';
import { drawCuts, type ShareCut } from './perturb.js';
import type { ScenarioSpec, VariantKind, VariantSpec } from './scenario-spec.js';

export interface TraceDescriptor {
  family: string;
  scenario: ScenarioSpec;
  rate: number;
  seed: number;
  primaryWeight: number;
  /** Training only: random cuts of the primary share (perturb.ts). */
  cuts?: ShareCut[];
}

export interface DatasetSize {
  trainSeeds: number;
  variants: number;
  calibSeeds: number;
  testSeeds: number;
  rates: readonly number[];
  /** Named scenarios used (all by default). */
  scenarios?: readonly string[];
}

/**
 * The named scenarios the model is trained and judged on, pinned: scenarios added to the
 * simulator later (for the benchmark) must not change what `npm run train` rebuilds.
 */
export const TRAINING_SCENARIOS: readonly string[] = Object.freeze([
  'steady',
  'steady-noise-10',
  'steady-noise-15',
  'sudden-outage',
  'partial-outage',
  'ramp-60',
  'ramp-120',
  'latency-degradation',
  'flapping',
  'benign-bump',
  'recovery',
  'secondary-better',
  'drift',
  'steady-pair-95-93',
]);

export const FULL_SIZE: DatasetSize = { trainSeeds: 6, variants: 300, calibSeeds: 2, testSeeds: 3, rates: [2, 20, 100] };
export const TINY_SIZE: DatasetSize = {
  trainSeeds: 1,
  variants: 4,
  calibSeeds: 1,
  testSeeds: 1,
  rates: [20],
  scenarios: ['ramp-120', 'benign-bump', 'steady-noise-15', 'sudden-outage'],
};

/** Held-out seeds do not depend on the training seed: every model is judged on the same runs. */
const HELD_OUT_SEED = 0x5eed;
export const HELD_OUT_INCIDENT_AT_MS = 120_000;
/** The 30-minute drift scenario is cut to 15 minutes: it is a negative, length adds little. */
const DURATION_OVERRIDES: Record<string, number> = { drift: 900_000 };

function named(name: string, incidentAtMs: number): ScenarioSpec {
  const d = DURATION_OVERRIDES[name];
  return { kind: 'named', name, incidentAtMs, ...(d !== undefined && { durationMs: d }) };
}

export function heldOutSpecs(split: 'calib' | 'test', size: DatasetSize): TraceDescriptor[] {
  const seeds = split === 'calib' ? size.calibSeeds : size.testSeeds;
  const out: TraceDescriptor[] = [];
  for (const name of size.scenarios ?? TRAINING_SCENARIOS) {
    for (const rate of size.rates) {
      for (let s = 0; s < seeds; s++) {
        out.push({ family: name, scenario: named(name, HELD_OUT_INCIDENT_AT_MS), rate, seed: deriveSeed(HELD_OUT_SEED, `${split}:${name}:${rate}:${s}`), primaryWeight: 0.9 });
      }
    }
  }
  return out;
}

export function trainSpecs(seed: number, size: DatasetSize): TraceDescriptor[] {
  const rng = new Rng(seed).fork('dataset');
  const out: TraceDescriptor[] = [];
  for (const name of size.scenarios ?? TRAINING_SCENARIOS) {
    for (const rate of size.rates) {
      for (let s = 0; s < size.trainSeeds; s++) {
        const at = incidentStart(rng);
        const w = 0.6 + 0.35 * rng.next();
        out.push({ family: name, scenario: named(name, at), rate, seed: rng.nextUint32(), primaryWeight: w, cuts: drawCuts(rng, at, w) });
      }
    }
  }
  for (let i = 0; i < size.variants; i++) {
    const v = drawVariant(rng);
    // Log-uniform 2-100 tx/s: the model must work at every volume, not just three.
    const rate = Math.round(2 * Math.pow(50, rng.next()) * 10) / 10;
    const w = 0.6 + 0.35 * rng.next();
    out.push({ family: v.kind, scenario: v, rate, seed: rng.nextUint32(), primaryWeight: w, cuts: drawCuts(rng, v.at, w) });
  }
  return out;
}

/**
 * When a training run's event starts: 120 s plus an exponential delay (mean 150 s, capped at
 * 600 s). Memoryless on purpose: with a fixed or uniform start the GRU learns to count steps
 * ("a few minutes in, things break") and raises its probability on any young healthy
 * processor; the service runs the GRU for days, where such a clock means nothing. The first
 * 120 s keep the labels of the cold start clean: windows filling up (timeouts arrive only
 * after 15 s, so a fresh window's error rate climbs even on steady noise) must read as
 * harmless, not as the prelude of an outage that no signal could have announced.
 */
function incidentStart(rng: Rng): number {
  return 120_000 + Math.round(Math.min(600_000, -150_000 * Math.log(1 - rng.next())));
}

/**
 * Bumps and ramps dominate: telling a bump's crest from a ramp passing the same level is the
 * hard part, and a model that has seen few bumps near that level learns "20 % and rising ⇒
 * failover" (every ramp passes there) and shifts on every harmless bump.
 */
const KINDS: readonly VariantKind[] = ['v-ramp', 'v-ramp', 'v-bump', 'v-bump', 'v-bump', 'v-bump', 'v-steady', 'v-latency', 'v-step', 'v-flap'];

function drawVariant(rng: Rng): VariantSpec {
  const u = (lo: number, hi: number): number => lo + (hi - lo) * rng.next();
  const kind = KINDS[Math.floor(rng.next() * KINDS.length)];
  const latMedian = u(120, 400);
  const common = {
    kind,
    at: incidentStart(rng),
    base: u(0.005, 0.06),
    decline: u(0.04, 0.15),
    latMedian,
    latP95: latMedian * u(2, 5),
    secondaryErr: u(0.01, 0.06),
  };
  switch (kind) {
    case 'v-ramp':
      return { ...common, level: u(0.35, 0.9), d1: u(30_000, 300_000), d2: 0, d3: 0, flag: false };
    case 'v-bump':
      // Crests near the failover threshold's neighbourhood, some held for minutes (a ramp that stops).
      return { ...common, level: u(0.12, 0.26), d1: u(15_000, 75_000), d2: rng.next() < 0.5 ? 0 : u(0, 120_000), d3: u(15_000, 75_000), flag: false };
    case 'v-steady':
      return { ...common, level: u(0.01, 0.18), d1: 0, d2: 0, d3: 0, flag: false };
    case 'v-latency':
      return { ...common, level: u(3, 12), d1: u(30_000, 120_000), d2: u(20_000, 60_000), d3: u(30_000, 120_000), flag: rng.next() < 0.5 };
    case 'v-step':
      return { ...common, level: u(0.35, 1), d1: u(30_000, 180_000), d2: 0, d3: 0, flag: rng.next() < 0.5 };
    case 'v-flap':
      return { ...common, level: u(0.3, 0.8), d1: u(10_000, 40_000), d2: u(10_000, 40_000), d3: 0, flag: false };
  }
}
