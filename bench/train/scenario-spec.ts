/**
 * Serializable scenario descriptions for the training set: the simulator's named scenarios
 * (bench/sim/scenarios.ts) plus parametric variants of the same shapes, built from the
 * simulator's own blocks (makeProcessor, piecewise curves, findIncident). Variants widen the
 * training distribution (other ramp speeds, bump heights, noise levels, latency-led incidents)
 * so the model learns the shapes rather than the exact named curves; they appear in the
 * training split only, the held-out metrics use the named scenarios.
 *
 * A description is plain data so worker threads can rebuild the scenario (functions do not
 * cross threads).
 */
import { piecewise, windows } from '../sim/curves.js';
import { findIncident } from '../sim/incident.js';
import { makeProcessor, type ErrorMix } from '../sim/processor.js';
import { getScenario, type Scenario } from '../sim/scenarios.js';

export type VariantKind = 'v-ramp' | 'v-bump' | 'v-steady' | 'v-latency' | 'v-step' | 'v-flap';

export interface NamedSpec {
  kind: 'named';
  name: string;
  incidentAtMs: number;
  durationMs?: number;
}

/** Variant parameters; times in ms, rates in 0..1. */
export interface VariantSpec {
  kind: VariantKind;
  at: number;
  base: number;
  decline: number;
  latMedian: number;
  latP95: number;
  secondaryErr: number;
  /** Kind-specific: peak level, durations (see buildVariant). */
  level: number;
  d1: number;
  d2: number;
  d3: number;
  /** v-latency: whether errors follow the slowdown; v-step: whether it recovers. */
  flag: boolean;
}

export type ScenarioSpec = NamedSpec | VariantSpec;

const OVERLOAD_MIX: ErrorMix = [
  ['timeout', 0.7],
  ['http_503', 0.2],
  ['http_500', 0.1],
];
const TAIL_MS = 150_000;

export function buildScenario(spec: ScenarioSpec): Scenario {
  if (spec.kind === 'named') {
    return getScenario(spec.name, {
      incidentAtMs: spec.incidentAtMs,
      ...(spec.durationMs !== undefined && { durationMs: spec.durationMs }),
    });
  }
  return buildVariant(spec);
}

function buildVariant(v: VariantSpec): Scenario {
  const { at, base } = v;
  let errorRate = piecewise([[0, base]]);
  let latencyMedianMs = piecewise([[0, v.latMedian]]);
  let latencyP95Ms = piecewise([[0, v.latP95]]);
  let errorMix: ErrorMix | undefined;
  let durationMs: number;
  switch (v.kind) {
    case 'v-ramp': // level = peak, d1 = ramp length
      errorRate = piecewise([[at, base], [at + v.d1, v.level]]);
      durationMs = at + v.d1 + TAIL_MS;
      break;
    case 'v-bump': // level = peak, d1 rise, d2 hold, d3 fall
      errorRate = piecewise([[at, base], [at + v.d1, v.level], [at + v.d1 + v.d2, v.level], [at + v.d1 + v.d2 + v.d3, base]]);
      durationMs = at + v.d1 + v.d2 + v.d3 + TAIL_MS;
      break;
    case 'v-steady': // level = error rate
      errorRate = piecewise([[0, v.level]]);
      durationMs = at + 300_000;
      break;
    case 'v-latency': {
      // p95 ×level over d1; then errors (timeouts) up to 0.3-0.7 over d2 (flag), or recovery after d3.
      const slow = at + v.d1;
      latencyMedianMs = piecewise([[at, v.latMedian], [slow, v.latMedian * Math.sqrt(v.level)]]);
      latencyP95Ms = piecewise([[at, v.latP95], [slow, v.latP95 * v.level]]);
      errorMix = OVERLOAD_MIX;
      if (v.flag) {
        errorRate = piecewise([[slow, base], [slow + v.d2, 0.3 + 0.4 * ((v.level - 3) / 9)]]);
        durationMs = slow + v.d2 + TAIL_MS;
      } else {
        const back = slow + v.d3;
        latencyMedianMs = piecewise([[at, v.latMedian], [slow, v.latMedian * Math.sqrt(v.level)], [back, v.latMedian * Math.sqrt(v.level)], [back + v.d1, v.latMedian]]);
        latencyP95Ms = piecewise([[at, v.latP95], [slow, v.latP95 * v.level], [back, v.latP95 * v.level], [back + v.d1, v.latP95]]);
        durationMs = back + v.d1 + TAIL_MS;
      }
      break;
    }
    case 'v-step': // level for d1 (recovers when flag), else for good
      errorRate = v.flag ? windows(base, [{ startMs: at, endMs: at + v.d1, value: v.level }]) : piecewise([[at, base], [at, v.level]]);
      durationMs = at + (v.flag ? v.d1 : 0) + TAIL_MS;
      break;
    case 'v-flap': {
      // level for d1, base for d2, repeated 4 times.
      const spans = [0, 1, 2, 3].map((c) => ({ startMs: at + c * (v.d1 + v.d2), endMs: at + c * (v.d1 + v.d2) + v.d1, value: v.level }));
      errorRate = windows(base, spans);
      durationMs = at + 4 * (v.d1 + v.d2) + TAIL_MS;
      break;
    }
  }
  const name = `${v.kind}`;
  const primary = makeProcessor({
    id: `${name}-primary`,
    errorRate,
    declineRate: v.decline,
    latencyMedianMs,
    latencyP95Ms,
    ...(errorMix && { errorMix }),
  });
  const secondary = makeProcessor({ id: `${name}-secondary`, errorRate: v.secondaryErr, declineRate: v.decline, latencyMedianMs: 260, latencyP95Ms: 850 });
  const incident = findIncident(primary.errorRate, durationMs);
  return {
    name,
    description: `training variant ${JSON.stringify(v)}`,
    durationMs,
    primary,
    secondary,
    ...(incident && { incident }),
    expectFailover: incident !== undefined,
    phases: [{ startMs: 0, name: 'variant' }],
  };
}
