/**
 * Simulated payment processor. Every property is a function of scenario time so a
 * scenario can script incidents; `drawOutcome` samples one payment attempt.
 *
 * Two kinds of failure are kept apart on purpose: a technical error means the processor
 * failed (the signal a router should react to), an issuer decline means it worked and the
 * card's bank said no (not a processor fault, though it still lowers the approval rate).
 */
import { constant, type TimeFn } from './curves.js';
import { Z95, type Rng } from './rng.js';

export const TECHNICAL_ERROR_CODES = ['timeout', 'processor_unavailable', 'http_503', 'http_500', 'network_error'] as const;
export type TechnicalErrorCode = (typeof TECHNICAL_ERROR_CODES)[number];

export const DECLINE_CODES = ['do_not_honor', 'insufficient_funds', 'card_declined', 'expired_card', 'incorrect_cvc', 'fraudulent'] as const;
export type DeclineCode = (typeof DECLINE_CODES)[number];

/** Weighted error codes of technical errors; `null` = the processor failed without a code. */
export type ErrorMix = ReadonlyArray<readonly [TechnicalErrorCode | null, number]>;

/** A mix of the usual technical failures, used unless a scenario says otherwise. */
export const DEFAULT_ERROR_MIX: ErrorMix = [
  ['timeout', 0.25],
  ['processor_unavailable', 0.2],
  ['http_503', 0.25],
  ['http_500', 0.15],
  ['network_error', 0.1],
  [null, 0.05],
];

/** Rough real-world shares of issuer decline reasons. */
const DECLINE_MIX: ReadonlyArray<readonly [DeclineCode, number]> = [
  ['do_not_honor', 0.35],
  ['insufficient_funds', 0.25],
  ['card_declined', 0.2],
  ['expired_card', 0.07],
  ['incorrect_cvc', 0.06],
  ['fraudulent', 0.07],
];
const DECLINE_WEIGHTS = DECLINE_MIX.map(([, w]) => w);

/** A timed-out call returns when the client's timer fires, a little after the timeout. */
const TIMEOUT_JITTER_MS = 250;

export interface ProcessorModel {
  readonly id: string;
  readonly name: string;
  /** P(technical error) at t. */
  readonly errorRate: TimeFn;
  /** P(issuer decline | no technical error) at t: only requests that reach the issuer can be declined. */
  readonly declineRate: TimeFn;
  readonly errorMix: (tMs: number) => ErrorMix;
  readonly latencyMedianMs: TimeFn;
  readonly latencyP95Ms: TimeFn;
  /** Client-side timeout: `timeout` errors take this long, and no latency exceeds it by more than the jitter. */
  readonly timeoutMs: number;
}

export type OutcomeKind = 'approved' | 'declined' | 'technical_error';

export interface Outcome {
  readonly success: boolean;
  readonly latency_ms: number;
  /** Technical error code, decline code, or null (approved, or an error without a code). */
  readonly error_code: string | null;
  /** Ground truth that the engine does not receive; scoring uses it. */
  readonly kind: OutcomeKind;
}

/** Constructor input: each property either fixed or a function of time. */
export interface ProcessorSpec {
  id: string;
  name?: string;
  errorRate: number | TimeFn;
  declineRate: number | TimeFn;
  errorMix?: ErrorMix | ((tMs: number) => ErrorMix);
  latencyMedianMs?: number | TimeFn;
  latencyP95Ms?: number | TimeFn;
  timeoutMs?: number;
}

const asFn = (v: number | TimeFn): TimeFn => (typeof v === 'number' ? constant(v) : v);

export function makeProcessor(spec: ProcessorSpec): ProcessorModel {
  const mix = spec.errorMix ?? DEFAULT_ERROR_MIX;
  return {
    id: spec.id,
    name: spec.name ?? spec.id,
    errorRate: asFn(spec.errorRate),
    declineRate: asFn(spec.declineRate),
    errorMix: typeof mix === 'function' ? mix : () => mix,
    latencyMedianMs: asFn(spec.latencyMedianMs ?? 220),
    latencyP95Ms: asFn(spec.latencyP95Ms ?? 700),
    timeoutMs: spec.timeoutMs ?? 15_000,
  };
}

/** Decline rate giving overall approval `approval` when technical errors occur at `errorRate`. */
export function declineRateFor(approval: number, errorRate: number): number {
  return 1 - approval / (1 - errorRate);
}

/** P(success) at t: no technical error and not declined. The oracle and scoring use this. */
export function successProbability(model: ProcessorModel, tMs: number): number {
  return (1 - model.errorRate(tMs)) * (1 - model.declineRate(tMs));
}

/** Lognormal latency with the model's median and p95 at t, capped at the timeout. */
function drawLatency(model: ProcessorModel, tMs: number, rng: Rng): number {
  const median = model.latencyMedianMs(tMs);
  const p95 = model.latencyP95Ms(tMs);
  const sigma = p95 > median ? Math.log(p95 / median) / Z95 : 0;
  // A slower answer would be a timeout; capping (rather than converting) keeps the
  // technical error probability exactly errorRate(t), which scoring relies on.
  return Math.min(rng.lognormal(Math.log(median), sigma), model.timeoutMs);
}

export function drawOutcome(model: ProcessorModel, tMs: number, rng: Rng): Outcome {
  if (rng.next() < model.errorRate(tMs)) {
    const mix = model.errorMix(tMs);
    const code = mix[rng.pick(mix.map(([, w]) => w))][0];
    const latency_ms = code === 'timeout' ? model.timeoutMs + rng.next() * TIMEOUT_JITTER_MS : drawLatency(model, tMs, rng);
    return { success: false, latency_ms, error_code: code, kind: 'technical_error' };
  }
  const latency_ms = drawLatency(model, tMs, rng);
  if (rng.next() < model.declineRate(tMs)) {
    return { success: false, latency_ms, error_code: DECLINE_MIX[rng.pick(DECLINE_WEIGHTS)][0], kind: 'declined' };
  }
  return { success: true, latency_ms, error_code: null, kind: 'approved' };
}
