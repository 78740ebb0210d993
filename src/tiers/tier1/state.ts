/**
 * The Tier 1 state of one processor slot, as a plain record the pure state machine works on,
 * mapped to and from the processor row (PF_STATUS, PF_STATUS_SINCE_MS, PF_LAST_EVAL_MS and
 * the PF_T1_* bookkeeping fields). `allocRule` zero-fills the row, so 0 means "none" for every
 * bookkeeping field: no trip yet, bottom of the probe ladder, no baseline.
 */
import {
  PF_LAST_EVAL_MS,
  PF_STATUS,
  PF_STATUS_SINCE_MS,
  PF_T1_BASE,
  ProcessorStatus,
} from '../../shm/layout.js';

const T1_TRIPS = PF_T1_BASE; // trips in the current back-off streak
const T1_LAST_TRIP_MS = PF_T1_BASE + 1;
const T1_PROBE_RESUME_MS = PF_T1_BASE + 2; // probes suspended until then
const T1_PROBE_OK = PF_T1_BASE + 3; // successes and declines of the current probe phase
const T1_PROBE_TECH = PF_T1_BASE + 4; // technical errors of the current probe phase
const T1_PROBE_EPOCH = PF_T1_BASE + 5; // last 1-second count bucket added to the probe phase
const T1_STEP_OK_BASE = PF_T1_BASE + 6; // probeOk when the current ladder step began
const T1_LAT_BASELINE = PF_T1_BASE + 7; // EWMA of healthy-period p95 (ms), 0 = none yet
const T1_BASELINE_AGE_MS = PF_T1_BASE + 8; // healthy time folded into the baseline (capped)
const T1_RECOVERED_MS = PF_T1_BASE + 9; // last failed_over → healthy; older outcomes belong to the outage
const T1_PROBE_STEP = PF_T1_BASE + 10; // slow-start ladder step while failed_over, 0 = probeShare
const T1_STEP_TECH_BASE = PF_T1_BASE + 11; // probeTech when the current ladder step began

export interface ProcState {
  status: ProcessorStatus;
  statusSinceMs: number;
  lastEvalMs: number;
  trips: number;
  lastTripMs: number;
  probeResumeMs: number;
  probeOk: number;
  probeTech: number;
  probeEpoch: number;
  /** Slow-start ladder step of the current probe phase (share.ts PROBE_LADDER). */
  probeStep: number;
  /** Probe counts when the current step began: the step's batch is what came after. */
  stepOkBase: number;
  stepTechBase: number;
  latBaseline: number;
  baselineAgeMs: number;
  recoveredAtMs: number;
}

export function newProcState(): ProcState {
  return {
    status: ProcessorStatus.Healthy,
    statusSinceMs: 0,
    lastEvalMs: 0,
    trips: 0,
    lastTripMs: 0,
    probeResumeMs: 0,
    probeOk: 0,
    probeTech: 0,
    probeEpoch: 0,
    probeStep: 0,
    stepOkBase: 0,
    stepTechBase: 0,
    latBaseline: 0,
    baselineAgeMs: 0,
    recoveredAtMs: 0,
  };
}

/** `o` is the row's offset in `procF64`. */
export function readProcState(procF64: Float64Array, o: number, out: ProcState): ProcState {
  out.status = procF64[o + PF_STATUS] as ProcessorStatus;
  out.statusSinceMs = procF64[o + PF_STATUS_SINCE_MS];
  out.lastEvalMs = procF64[o + PF_LAST_EVAL_MS];
  out.trips = procF64[o + T1_TRIPS];
  out.lastTripMs = procF64[o + T1_LAST_TRIP_MS];
  out.probeResumeMs = procF64[o + T1_PROBE_RESUME_MS];
  out.probeOk = procF64[o + T1_PROBE_OK];
  out.probeTech = procF64[o + T1_PROBE_TECH];
  out.probeEpoch = procF64[o + T1_PROBE_EPOCH];
  out.probeStep = procF64[o + T1_PROBE_STEP];
  out.stepOkBase = procF64[o + T1_STEP_OK_BASE];
  out.stepTechBase = procF64[o + T1_STEP_TECH_BASE];
  out.latBaseline = procF64[o + T1_LAT_BASELINE];
  out.baselineAgeMs = procF64[o + T1_BASELINE_AGE_MS];
  out.recoveredAtMs = procF64[o + T1_RECOVERED_MS];
  return out;
}

export function writeProcState(procF64: Float64Array, o: number, st: ProcState): void {
  procF64[o + PF_STATUS] = st.status;
  procF64[o + PF_STATUS_SINCE_MS] = st.statusSinceMs;
  procF64[o + PF_LAST_EVAL_MS] = st.lastEvalMs;
  procF64[o + T1_TRIPS] = st.trips;
  procF64[o + T1_LAST_TRIP_MS] = st.lastTripMs;
  procF64[o + T1_PROBE_RESUME_MS] = st.probeResumeMs;
  procF64[o + T1_PROBE_OK] = st.probeOk;
  procF64[o + T1_PROBE_TECH] = st.probeTech;
  procF64[o + T1_PROBE_EPOCH] = st.probeEpoch;
  procF64[o + T1_PROBE_STEP] = st.probeStep;
  procF64[o + T1_STEP_OK_BASE] = st.stepOkBase;
  procF64[o + T1_STEP_TECH_BASE] = st.stepTechBase;
  procF64[o + T1_LAT_BASELINE] = st.latBaseline;
  procF64[o + T1_BASELINE_AGE_MS] = st.baselineAgeMs;
  procF64[o + T1_RECOVERED_MS] = st.recoveredAtMs;
}
