/**
 * Named incident scenarios: two simulated processors (the rule's primary and secondary),
 * a duration, and the incident window used for scoring. Times are ms since scenario start.
 *
 * Unless a scenario says otherwise both processors are "healthy": 2 % technical errors,
 * 8 % issuer declines (approval ≈ 0.90), median latency ~220 ms, p95 ~700 ms.
 */
import { piecewise, windows, type TimeFn } from './curves.js';
import { findIncident, type IncidentWindow } from './incident.js';
import { declineRateFor, makeProcessor, type ErrorMix, type ProcessorModel, type ProcessorSpec } from './processor.js';

export interface Phase {
  readonly startMs: number;
  readonly name: string;
}

export interface Scenario {
  readonly name: string;
  readonly description: string;
  readonly durationMs: number;
  readonly primary: ProcessorModel;
  readonly secondary: ProcessorModel;
  /** When the primary is bad enough that traffic should leave it (see incident.ts). */
  readonly incident?: IncidentWindow;
  /** Whether a health-based engine should fail over at all; false means any failover is a false one. */
  readonly expectFailover: boolean;
  /** Labels for progress output, ordered by start time; the first starts at 0. */
  readonly phases: readonly Phase[];
}

export interface ScenarioOptions {
  /** Overrides the scenario's default length. */
  durationMs?: number;
  /** When the disturbance begins (default 60 s); live mode moves it earlier. Ignored by steady scenarios. */
  incidentAtMs?: number;
}

export type ScenarioFactory = (options?: ScenarioOptions) => Scenario;

const BASE_ERROR_RATE = 0.02;
const BASE_DECLINE_RATE = 0.08;
const DEFAULT_INCIDENT_AT_MS = 60_000;
/** Length of scenarios with no scripted event. */
const STEADY_DURATION_MS = 600_000;
/** Observation time kept after an event so that recovery and oscillation show up. */
const TAIL_MS = 180_000;

/** An outage looks like refused connections and 503s rather than slow timeouts. */
const OUTAGE_MIX: ErrorMix = [
  ['processor_unavailable', 0.4],
  ['http_503', 0.4],
  ['network_error', 0.15],
  [null, 0.05],
];
/** A saturated processor mostly times out. */
const OVERLOAD_MIX: ErrorMix = [
  ['timeout', 0.7],
  ['http_503', 0.2],
  ['http_500', 0.1],
];

type Overrides = Partial<Omit<ProcessorSpec, 'id' | 'name'>>;

function processors(name: string, primary: Overrides = {}, secondary: Overrides = {}): Pick<Scenario, 'primary' | 'secondary'> {
  const healthy = { errorRate: BASE_ERROR_RATE, declineRate: BASE_DECLINE_RATE };
  return {
    primary: makeProcessor({ id: `sim-${name}-primary`, name: 'Simulated primary', ...healthy, ...primary }),
    secondary: makeProcessor({
      id: `sim-${name}-secondary`,
      name: 'Simulated secondary',
      ...healthy,
      latencyMedianMs: 260,
      latencyP95Ms: 850,
      ...secondary,
    }),
  };
}

/** Completes a scenario with the incident window derived from the primary's error curve. */
function scenario(fields: Omit<Scenario, 'incident' | 'expectFailover'>): Scenario {
  const { name, description, durationMs, primary, secondary, phases } = fields;
  const incident = findIncident(primary.errorRate, durationMs);
  return { name, description, durationMs, primary, secondary, phases, ...(incident && { incident }), expectFailover: incident !== undefined };
}

/** Scenario with no event: both processors constant. */
function steadyFactory(name: string, description: string, primary: Overrides, secondary: Overrides = primary): ScenarioFactory {
  return (o = {}) =>
    scenario({
      name,
      description,
      durationMs: o.durationMs ?? STEADY_DURATION_MS,
      ...processors(name, primary, secondary),
      phases: [{ startMs: 0, name: 'steady' }],
    });
}

/** Healthy until `at`, then technical errors rise linearly to `peak` over `rampMs` (0 = a step) and stay. */
function errorRamp(name: string, description: string, rampMs: number, peak: number): ScenarioFactory {
  return (o = {}) => {
    const at = o.incidentAtMs ?? DEFAULT_INCIDENT_AT_MS;
    return scenario({
      name,
      description,
      durationMs: o.durationMs ?? at + rampMs + TAIL_MS,
      ...processors(name, {
        errorRate: piecewise([
          [0, BASE_ERROR_RATE],
          [at, BASE_ERROR_RATE],
          [at + rampMs, peak],
        ]),
        ...(rampMs === 0 && { errorMix: OUTAGE_MIX }),
      }),
      phases: [
        { startMs: 0, name: 'baseline' },
        ...(rampMs > 0 ? [{ startMs: at, name: 'ramp' }] : []),
        { startMs: at + rampMs, name: peak >= 1 ? 'outage' : 'degraded' },
      ],
    });
  };
}

const latencyDegradation: ScenarioFactory = (o = {}) => {
  const name = 'latency-degradation';
  const at = o.incidentAtMs ?? DEFAULT_INCIDENT_AT_MS;
  const slowAt = at + 60_000; // latency has risen fully; errors start climbing here
  const errorsAt = slowAt + 30_000;
  const latency = (base: number, peak: number): TimeFn =>
    piecewise([
      [at, base],
      [slowAt, peak],
    ]);
  return scenario({
    name,
    description: 'Primary p95 latency climbs 10x (700 ms to 7 s) over 60 s, then timeouts rise to 50 % over 30 s',
    durationMs: o.durationMs ?? errorsAt + TAIL_MS,
    ...processors(name, {
      latencyMedianMs: latency(220, 900),
      latencyP95Ms: latency(700, 7_000),
      errorRate: piecewise([
        [slowAt, BASE_ERROR_RATE],
        [errorsAt, 0.5],
      ]),
      errorMix: OVERLOAD_MIX,
    }),
    phases: [
      { startMs: 0, name: 'baseline' },
      { startMs: at, name: 'latency-rising' },
      { startMs: slowAt, name: 'errors-rising' },
      { startMs: errorsAt, name: 'degraded' },
    ],
  });
};

/** Bad/good period lengths (s) of `flapping`: irregular so that a fixed-period detector cannot lock on. */
const FLAP_PATTERN_S = [30, 20, 40, 30, 20, 40, 30];

const flapping: ScenarioFactory = (o = {}) => {
  const name = 'flapping';
  const at = o.incidentAtMs ?? DEFAULT_INCIDENT_AT_MS;
  const spans: Array<{ startMs: number; endMs: number; value: number }> = [];
  const phases: Phase[] = [{ startMs: 0, name: 'baseline' }];
  let t = at;
  FLAP_PATTERN_S.forEach((seconds, i) => {
    const bad = i % 2 === 0;
    if (bad) spans.push({ startMs: t, endMs: t + seconds * 1000, value: 0.6 });
    phases.push({ startMs: t, name: bad ? 'flap-bad' : 'flap-good' });
    t += seconds * 1000;
  });
  phases.push({ startMs: t, name: 'healthy' });
  return scenario({
    name,
    description: 'Primary alternates between 60 % errors and healthy in 20-40 s periods, then stays healthy',
    durationMs: o.durationMs ?? t + TAIL_MS,
    ...processors(name, { errorRate: windows(BASE_ERROR_RATE, spans) }),
    phases,
  });
};

/** Issue 17's flapping processor: down 10 s, up 10 s, twelve times, then healthy. */
const flapping10: ScenarioFactory = (o = {}) => {
  const name = 'flapping-10';
  const at = o.incidentAtMs ?? DEFAULT_INCIDENT_AT_MS;
  const spans: Array<{ startMs: number; endMs: number; value: number }> = [];
  const phases: Phase[] = [{ startMs: 0, name: 'baseline' }];
  for (let i = 0; i < 12; i++) {
    const t = at + i * 20_000;
    spans.push({ startMs: t, endMs: t + 10_000, value: 1 });
    phases.push({ startMs: t, name: 'flap-down' }, { startMs: t + 10_000, name: 'flap-up' });
  }
  const end = at + 12 * 20_000;
  phases.push({ startMs: end, name: 'healthy' });
  return scenario({
    name,
    description: 'Primary fully down for 10 s, up for 10 s, twelve times over 4 minutes, then healthy',
    durationMs: o.durationMs ?? end + TAIL_MS,
    ...processors(name, { errorRate: windows(BASE_ERROR_RATE, spans), errorMix: OUTAGE_MIX }),
    phases,
  });
};

/**
 * Latency jitter: median and p95 wander ±30 % around their base on two incommensurate
 * periods (37 s and 113 s), the kind of wobble a healthy processor shows all day.
 */
function jitter(base: number): TimeFn {
  return (t) => base * (1 + 0.2 * Math.sin((2 * Math.PI * t) / 37_000) + 0.1 * Math.sin((2 * Math.PI * t) / 113_000 + 1));
}

const benignBump: ScenarioFactory = (o = {}) => {
  const name = 'benign-bump';
  const at = o.incidentAtMs ?? DEFAULT_INCIDENT_AT_MS;
  return scenario({
    name,
    description: 'Primary errors rise to 20 % over 30 s and recede over 30 s; below the incident threshold, no failover wanted',
    durationMs: o.durationMs ?? at + 60_000 + TAIL_MS,
    ...processors(name, {
      errorRate: piecewise([
        [at, BASE_ERROR_RATE],
        [at + 30_000, 0.2],
        [at + 60_000, BASE_ERROR_RATE],
      ]),
    }),
    phases: [
      { startMs: 0, name: 'baseline' },
      { startMs: at, name: 'bump' },
      { startMs: at + 60_000, name: 'baseline' },
    ],
  });
};

const recovery: ScenarioFactory = (o = {}) => {
  const name = 'recovery';
  const at = o.incidentAtMs ?? DEFAULT_INCIDENT_AT_MS;
  const endMs = at + 120_000;
  return scenario({
    name,
    description: 'Primary fully down for 120 s, then fully healthy: the engine must come back',
    durationMs: o.durationMs ?? endMs + TAIL_MS,
    ...processors(name, { errorRate: windows(BASE_ERROR_RATE, [{ startMs: at, endMs, value: 1 }]), errorMix: OUTAGE_MIX }),
    phases: [
      { startMs: 0, name: 'baseline' },
      { startMs: at, name: 'outage' },
      { startMs: endMs, name: 'recovered' },
    ],
  });
};

/**
 * A partial outage that ends: 60% technical errors (flapping's mix, a quarter of them
 * timeouts) for 120 s, then healthy. What a failover on a partial outage (a flapper from the
 * start, src/tiers/tier1/backoff.ts isPartialOutage) costs in recovery time.
 */
const partialRecovery: ScenarioFactory = (o = {}) => {
  const name = 'partial-recovery';
  const at = o.incidentAtMs ?? DEFAULT_INCIDENT_AT_MS;
  const endMs = at + 120_000;
  return scenario({
    name,
    description: 'Primary at 60 % technical errors for 120 s, then fully healthy: the engine must come back',
    durationMs: o.durationMs ?? endMs + TAIL_MS,
    ...processors(name, { errorRate: windows(BASE_ERROR_RATE, [{ startMs: at, endMs, value: 0.6 }]) }),
    phases: [
      { startMs: 0, name: 'baseline' },
      { startMs: at, name: 'outage' },
      { startMs: endMs, name: 'recovered' },
    ],
  });
};

/** Approval rates of the two processors cross linearly over the whole run (default 30 min). */
const drift: ScenarioFactory = (o = {}) => {
  const name = 'drift';
  const durationMs = o.durationMs ?? 1_800_000;
  const approvalCurve = (from: number, to: number): TimeFn => {
    const approval = piecewise([
      [0, from],
      [durationMs, to],
    ]);
    return (t) => declineRateFor(approval(t), BASE_ERROR_RATE);
  };
  return scenario({
    name,
    description: 'Approval drifts from 0.95 to 0.89 on the primary and 0.89 to 0.95 on the secondary; they cross half-way',
    durationMs,
    ...processors(name, { declineRate: approvalCurve(0.95, 0.89) }, { declineRate: approvalCurve(0.89, 0.95) }),
    phases: [
      { startMs: 0, name: 'primary-better' },
      { startMs: durationMs / 2, name: 'secondary-better' },
    ],
  });
};

/** Healthy processors with the given approval rates (via declines; technical errors stay at baseline). */
const approvals = (approval: number): Overrides => ({ declineRate: declineRateFor(approval, BASE_ERROR_RATE) });

export const SCENARIOS: Record<string, ScenarioFactory> = {
  steady: steadyFactory('steady', 'Both processors healthy: 2 % technical errors, 8 % declines', {}),
  'steady-noise-10': steadyFactory('steady-noise-10', 'Both processors at a steady 10 % technical errors: noise, never a failover', {
    errorRate: 0.1,
  }),
  'steady-noise-15': steadyFactory('steady-noise-15', 'Both processors at a steady 15 % technical errors: noise, never a failover', {
    errorRate: 0.15,
  }),
  'steady-noise-3-jitter': steadyFactory(
    'steady-noise-3-jitter',
    'Both processors at a steady 3 % technical errors with latency jitter: noise, never a shift',
    { errorRate: 0.03, latencyMedianMs: jitter(220), latencyP95Ms: jitter(700) },
  ),
  'steady-noise-10-jitter': steadyFactory(
    'steady-noise-10-jitter',
    'Both processors at a steady 10 % technical errors with latency jitter: noise, never a shift',
    { errorRate: 0.1, latencyMedianMs: jitter(220), latencyP95Ms: jitter(700) },
  ),
  'sudden-outage': errorRamp('sudden-outage', 'Primary goes to 100 % technical errors at once and stays down', 0, 1),
  'partial-outage': errorRamp('partial-outage', 'Primary goes to 60 % technical errors at once and stays there', 0, 0.6),
  'ramp-60': errorRamp('ramp-60', 'Primary technical errors rise linearly 2 % to 60 % over 60 s', 60_000, 0.6),
  'ramp-120': errorRamp('ramp-120', 'Primary technical errors rise linearly 2 % to 60 % over 120 s', 120_000, 0.6),
  'ramp-300': errorRamp('ramp-300', 'Primary technical errors rise linearly 2 % to 60 % over 300 s', 300_000, 0.6),
  'latency-degradation': latencyDegradation,
  flapping,
  'flapping-10': flapping10,
  'benign-bump': benignBump,
  recovery,
  'partial-recovery': partialRecovery,
  'secondary-better': steadyFactory(
    'secondary-better',
    'No incident, but the secondary approves 0.96 against the primary 0.90',
    approvals(0.9),
    approvals(0.96),
  ),
  drift,
  'steady-pair-95-93': steadyFactory('steady-pair-95-93', 'No incident; approval 0.95 on the primary, 0.93 on the secondary', approvals(0.95), approvals(0.93)),
};

export function listScenarios(): string[] {
  return Object.keys(SCENARIOS);
}

/** Builds a scenario by name; the error lists the valid names. */
export function getScenario(name: string, options?: ScenarioOptions): Scenario {
  const factory = Object.hasOwn(SCENARIOS, name) ? SCENARIOS[name] : undefined;
  if (!factory) throw new Error(`unknown scenario "${name}"; known: ${listScenarios().join(', ')}`);
  return factory(options);
}

/** The scenario cut short at `durationMs` (a run stopped early): an incident still going on then has no end. */
export function truncateScenario(s: Scenario, durationMs: number): Scenario {
  return scenario({ ...s, durationMs: Math.min(durationMs, s.durationMs) });
}

/** Name of the phase in effect at t. */
export function phaseAt(s: Scenario, tMs: number): string {
  let current = s.phases[0].name;
  for (const p of s.phases) if (p.startMs <= tMs) current = p.name;
  return current;
}
