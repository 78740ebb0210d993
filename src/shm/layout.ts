/**
 * The shared-memory layout: every offset that the front thread and the worker pool
 * exchange through SharedArrayBuffers is named here, and only here.
 *
 * ```
 *  rule segment (one SAB per RULES_PER_SEGMENT rules)            window segment (one SAB per WINDOWS_PER_SEGMENT)
 *  ┌──────────────────────────────┐                              ┌────────────────────────────────────────────┐
 *  │ ruleI32  [rule][RI_*]        │ seqlock, decision source,    │ latSum   [win][LAT_BUCKETS]  f64   5 s      │ every
 *  │ ruleF64  [rule][RF_*]        │ weights the route path reads │ latEpoch [win][LAT_BUCKETS]                 │ window
 *  │ procF64  [rule*2+k][PF_*]    │ health + engine state (k=0   │ ringHdr  [win][RH_*]                        │
 *  │                              │ primary, k=1 secondary)      │ ring     [win][RING_EVENTS] u32             │ compact
 *  └──────────────────────────────┘                              │ countHdr [win][COUNT_BUCKETS][CB_*]  1 s    │ promoted
 *                                                                │ latBins  [win][LAT_BUCKETS][LAT_BINS] u16   │ only
 *                                                                └────────────────────────────────────────────┘
 * ```
 *
 * Who writes what (a single writer per field, so plain stores suffice except where noted):
 * - front thread: rule creation fields, window buckets (outcomes), consecutive-failure counters;
 * - worker (the one task running a tenant's shard): status, published health, decision fields,
 *   engine state (Tier 1 bookkeeping, GRU hidden state, bandit posteriors).
 * The decision fields the route path reads together (effective weight, source, probabilities)
 * are published under a seqlock (`RI_SEQ`): the writer makes it odd, writes, makes it even;
 * a reader retries while it is odd or changed, so a route never sees half an update.
 */

export const RULES_PER_SEGMENT = 1024;
export const RULE_SHIFT = 10; // log2(RULES_PER_SEGMENT)
export const RULE_MASK = RULES_PER_SEGMENT - 1;

// ── per rule, Int32 fields ───────────────────────────────────────────────────────────────
export const RI_SEQ = 0; // seqlock version of the decision fields (Atomics)
export const RI_ACTIVE = 1; // 1 while the slot holds a live rule
export const RI_DECISION_SOURCE = 2; // DecisionSource code
export const RI_WINDOW_PRIMARY = 3; // window index of the primary's outcomes, -1 until first outcome
export const RI_WINDOW_SECONDARY = 4; // window index of the secondary (same as primary for a self-fallback rule)
export const RI_RUN_PRIMARY = 5; // consecutive technical failures of the primary (front thread writes with Atomics and reads its own plainly; the pool reads with Atomics)
export const RI_RUN_SECONDARY = 6;
export const RI_GENERATION = 7; // bumped each time the slot is reused, so stale task results are ignored
export const RI_COMMAND = 8; // ManualCommand an operator asked for (front writes, the worker takes it with Atomics.exchange)
/**
 * Cluster mode: the other replicas' current runs of consecutive technical failures of the
 * processor, summed (front thread writes as their outcome deltas arrive, Atomics). The worker
 * judges the run length on local + remote, so a burst spread over replicas trips as in one process.
 */
export const RI_REMOTE_RUN_PRIMARY = 9;
export const RI_REMOTE_RUN_SECONDARY = 10;
/**
 * Seqlock version of the rule's published health as a whole: both processor rows and the
 * decision fields, odd while the worker evaluating the rule writes them (Atomics). A health
 * read (engine/health-view.ts) retries until it saw no write, so it never pairs a new status
 * with an old decision, or one processor's new bandit weight with the other's old one. The
 * route path does not use it: RI_SEQ guards the few fields it reads.
 */
export const RI_HEALTH_SEQ = 11;
/**
 * 1 once the rule's processor rows hold state (evaluated, restored from a checkpoint, carried
 * over by a PATCH, written from the cluster's table), 0 while they are still the all-zero rows
 * of a fresh slot. Readers that go over every rule (the cycle, /metrics/, the health list, the
 * cluster table) check it instead of the rows: on kernels that back even a read of an untouched
 * anonymous page with memory, reading one field of every rule's rows made ~100 MB resident at
 * 100,000 rules (processor-rows.ts).
 */
export const RI_ROWS_IN_USE = 12;
export const RULE_I32_STRIDE = 13;

// ── per rule, Float64 fields ─────────────────────────────────────────────────────────────
export const RF_CONFIG_PRIMARY_WEIGHT = 0; // the weight the operator configured
export const RF_PRIMARY_SHARE = 1; // probability that a route picks the primary (engine output)
export const RF_FAILPROB_PRIMARY = 2; // Tier 2 calibrated failure probability, NaN when disabled
export const RF_FAILPROB_SECONDARY = 3;
export const RF_SAME_PROCESSOR = 4; // 1 when primary and secondary are the same processor
/**
 * Traffic counters for the per-rule metrics, front thread only (plain increments on the hot
 * path, read at scrape time): routed decisions per processor (k = 0 primary, 1 secondary) and
 * reported outcomes per processor and result (RF_OUTCOMES + k * OUTCOME_RESULTS + result).
 */
export const RF_ROUTED = 8; // + k
export const RF_OUTCOMES = 10; // + k * OUTCOME_RESULTS + OutcomeResult
export const OUTCOME_RESULTS = 3;
export const OUTCOME_RESULT_NAMES = ['success', 'decline', 'technical'] as const;
export const RULE_F64_STRIDE = 16;

export const enum DecisionSource {
  Rules = 0,
  Prediction = 1,
  Mab = 2,
}
export const DECISION_SOURCE_NAMES = ['rules', 'prediction', 'mab'] as const;

/** Operator commands carried by RI_COMMAND to the next evaluation of the rule. */
export const enum ManualCommand {
  None = 0,
  Failover = 1, // the primary goes failed_over now, as Tier 1 would (reason "manual")
  Recover = 2, // failed_over processors recover now; the primary gets its configured weight back
}

// ── per processor slot (two per rule), Float64 fields ────────────────────────────────────
export const PROCS_PER_RULE = 2;
export const PF_STATUS = 0; // ProcessorStatus code
export const PF_SUCCESS_RATE = 1; // published health, NaN when no samples
export const PF_ERROR_RATE = 2;
export const PF_AVG_LATENCY = 3;
export const PF_P95_LATENCY = 4; // NaN with no sample in the health horizon (shown as 0)
export const PF_P99_LATENCY = 5; // NaN with no sample in the health horizon (shown as 0)
export const PF_SAMPLE_COUNT = 6;
export const PF_FAILURE_PROB = 7; // NaN when prediction is disabled
export const PF_BANDIT_WEIGHT = 8; // NaN when the bandit is disabled
export const PF_DECLINE_RATE = 9;
export const PF_STATUS_SINCE_MS = 10;
export const PF_LAST_EVAL_MS = 11;
/** Tier 1 state-machine bookkeeping: PF_T1_BASE .. PF_T1_BASE + PF_T1_LEN - 1. */
export const PF_T1_BASE = 12;
export const PF_T1_LEN = 12;
/** Tier 3 (Autopilot) state: B_* (each row), BP_* (primary row only), BS_* (secondary row only). */
export const PF_BANDIT_BASE = 24;
export const PF_BANDIT_LEN = 6;
/** Tier 2 (Foresight) state: G_*, the GRU's step bookkeeping, latency baselines and hidden state. */
export const PF_GRU_BASE = 30;
export const PF_GRU_LEN = 34;
export const PROC_F64_STRIDE = 64;

// ── Tier 3 (Autopilot) fields inside PF_BANDIT_BASE .. + PF_BANDIT_LEN ──────────────────
/**
 * Each processor row holds its arm's posterior (B_*). The rule's allocation bookkeeping is
 * split over the two rows' last two fields, so its names say which row: BP_* exist only in
 * the primary row, BS_* only in the secondary row (BP_RAW_PRIMARY and BS_ALLOC_MS share an
 * offset, as do BP_ALLOC_KEY and BS_CHANGES, in different rows). src/tiers/autopilot/rows.ts
 * reads and writes them.
 *
 *   per arm (each row)            per rule (primary row)          per rule (secondary row)
 *   +0 alpha                      +4 BP_RAW_PRIMARY               +4 BS_ALLOC_MS
 *   +1 beta                       +5 BP_ALLOC_KEY                 +5 BS_CHANGES
 *   +2 updatedAtMs
 *   +3 last count bucket observed
 */
export const B_ALPHA = PF_BANDIT_BASE;
export const B_BETA = PF_BANDIT_BASE + 1;
export const B_UPDATED_MS = PF_BANDIT_BASE + 2;
export const B_LAST_BUCKET = PF_BANDIT_BASE + 3;
/** Primary row: the probability-of-best allocation of the primary before the Tier 2 cap. */
export const BP_RAW_PRIMARY = PF_BANDIT_BASE + 4;
/** Primary row: key of the constraints that allocation was computed under (autopilot/stage.ts allocationKey). */
export const BP_ALLOC_KEY = PF_BANDIT_BASE + 5;
/** Secondary row: clock time of that allocation. */
export const BS_ALLOC_MS = PF_BANDIT_BASE + 4;
/** Secondary row: change detections (abrupt-change restarts) on either arm, for diagnostics. */
export const BS_CHANGES = PF_BANDIT_BASE + 5;

// ── Tier 2 (Foresight) fields inside PF_GRU_BASE .. + PF_GRU_LEN (src/tiers/foresight/state.ts) ──
export const G_STEPS = PF_GRU_BASE; // steps taken since the last reset, 0 = cold
export const G_LAST_STEP_MS = PF_GRU_BASE + 1;
/** Bias-corrected EWMAs of log p50 / log p95 latency: numerator and weight. */
export const G_P50_NUM = PF_GRU_BASE + 2;
export const G_P50_DEN = PF_GRU_BASE + 3;
export const G_P95_NUM = PF_GRU_BASE + 4;
export const G_P95_DEN = PF_GRU_BASE + 5;
/**
 * Calibrated probabilities of the last PROB_HISTORY steps, newest first (G_PROB is the one in
 * force): the policy acts on the minimum over the tenant's `confirmSteps` of them.
 */
export const G_PROB = PF_GRU_BASE + 6;
export const PROB_HISTORY = 4;
export const G_HIDDEN = G_PROB + PROB_HISTORY;
/**
 * Decayed sums of technical errors and of outcomes (one update per GRU step, 10-minute
 * half-life): the processor's own usual error rate, against which the policy measures a rise
 * (src/tiers/foresight/rise.ts). Last in the block, after the hidden state's room, so that a
 * reset of the hidden state keeps them (like the latency baselines) and rows checkpointed
 * before they existed read as "no baseline yet" (those fields were unused hidden room, 0).
 */
export const G_ERR_NUM = PF_GRU_BASE + PF_GRU_LEN - 2;
export const G_ERR_DEN = PF_GRU_BASE + PF_GRU_LEN - 1;
/** Largest hidden size the reserved fields hold. */
export const MAX_HIDDEN = G_ERR_NUM - G_HIDDEN;

export const enum ProcessorStatus {
  Healthy = 0,
  Degraded = 1,
  FailedOver = 2,
}
export const STATUS_NAMES = ['healthy', 'degraded', 'failed_over'] as const;
export type StatusName = (typeof STATUS_NAMES)[number];
/** The value `service_processor_health_status` carries for each status (spec 4.9). */
export const STATUS_GAUGE = [1, 0.5, 0] as const;

// ── outcome windows ──────────────────────────────────────────────────────────────────────
/**
 * A window has two forms. It starts **compact**: a ring of its last RING_EVENTS outcomes, one
 * 32-bit word each (second, kind, latency bin), plus the per-5 s latency sums. Readers derive
 * the same counts and histograms from the ring as from dense buckets. When an outcome would
 * overwrite one still inside the count horizon (more than RING_EVENTS outcomes in 64 s, ~1 a
 * second), the front thread **promotes** the window: it replays the ring into the dense buckets
 * below and from then on writes those. A window is never demoted; freeing it (its rule deleted)
 * clears it back to compact.
 *
 * Dense buckets: counts in 1-second buckets (enough resolution to see a partial outage within
 * seconds), latency histograms in 5-second buckets (a histogram is 40x larger than a count
 * row). Each bucket carries the epoch it belongs to; the front thread resets a bucket lazily
 * when it first writes into a new epoch (epoch set to -1 while resetting, Atomics), so readers
 * ignore buckets that are stale or mid-reset.
 *
 * Why two forms: a dense window is ~8 KB. At 100,000 rules that all take some traffic that was
 * ~1 GB, most of it histograms holding a handful of samples. A compact window is 416 bytes,
 * and the dense area of a window that was never promoted is never touched, so its pages are
 * never resident (the segment is one zero-filled mapping). Memory follows the outcome rate,
 * not the number of rules.
 */
export const WINDOWS_PER_SEGMENT = 128;
export const WINDOW_SHIFT = 7;
export const WINDOW_MASK = WINDOWS_PER_SEGMENT - 1;

export const COUNT_BUCKET_MS = 1000;
export const COUNT_BUCKETS = 64; // 64 s of history
export const CB_EPOCH = 0;
export const CB_SUCCESS = 1;
export const CB_DECLINE = 2; // failed, issuer decline: counts against success rate, not the processor
export const CB_TECH_ERROR = 3; // failed, technical: a processor error
export const CB_TIMEOUT = 4; // subset of CB_TECH_ERROR
export const CB_STRIDE = 5;

export const LAT_BUCKET_MS = 5000;
export const LAT_BUCKETS = 12; // 60 s of history
/**
 * Log-scaled latency bins: bin i holds values in (GAMMA^(i-1), GAMMA^i] ms. With GAMMA = 1.04
 * the bin's representative value 2·GAMMA^i/(GAMMA+1) is within 1.96% of any value in it,
 * so percentiles are within 2% of the exact order statistic. 280 bins reach ~57 s; slower
 * values land in the last bin.
 */
export const LAT_GAMMA = 1.04;
export const LAT_BINS = 280;

/** Outcomes a compact window holds: promoted past ~1 outcome a second (64 in 64 s). */
export const RING_EVENTS = 64;
/** Compact header, Int32 fields per window. */
export const RH_COUNT = 0; // outcomes appended since the window was cleared; event i is in ring slot i % RING_EVENTS (Atomics)
export const RH_START = 1; // the first event that counts: a window quiet for 64 s starts afresh here (Atomics)
export const RH_DENSE = 2; // 1 once promoted: readers and the writer use the dense buckets (Atomics)
export const RH_LAST_SEC = 3; // the newest event's second (the writer's only)
export const RH_WRITING = 4; // 1 + the index of the event being written (= RH_COUNT between writes): its slot's old event is gone (Atomics)
export const RH_STRIDE = 5;
/**
 * An event word: bits 0-9 the latency bin (EV_NO_LATENCY for a timeout), 10-12 the kind
 * (OutcomeKind, or EV_LATENCY_ONLY for a latency a remote replica merged without its kind), 13-31
 * the count epoch (second) modulo 2^19. A ring spans at most RING_EVENTS × 64 s (a window quiet
 * for 64 s starts afresh), far less than 2^19 s, so a reader recovers the second unambiguously.
 */
export const EV_KIND_SHIFT = 10;
export const EV_SEC_SHIFT = 13;
export const EV_BIN_MASK = 0x3ff;
export const EV_KIND_MASK = 0x7;
export const EV_SEC_MASK = 0x7ffff;
export const EV_NO_LATENCY = 0x3ff;
export const EV_LATENCY_ONLY = 4;

/** Byte sizes, so both sides build identical views. */
export function ruleSegmentBytes(): number {
  const n = RULES_PER_SEGMENT;
  return (
    n * RULE_I32_STRIDE * 4 + n * RULE_F64_STRIDE * 8 + n * PROCS_PER_RULE * PROC_F64_STRIDE * 8
  );
}

/**
 * Decision epochs: one Int32 per rule segment, all in one SharedArrayBuffer of their own.
 * publishDecision adds 1 to the segment's epoch once it has published; the route path keeps a
 * routed rule's decision fields in its RuleCache (routing/rule-cache.ts) with the epoch it read
 * them at, and reads the rule's rows again only when that epoch has moved. The epochs are dense
 * (a cache line covers 16 segments, 16,384 rules) where the rows are not: at 100,000 rules, a
 * route's seqlocked read of its rule's two rows was a first touch of two pages, ~5% of the
 * route's CPU (issue 20, twenty-first pass).
 */
export const MAX_RULE_SEGMENTS = 65536; // 67,108,864 rules; the buffer's untouched pages cost no memory

export function decisionEpochsBytes(): number {
  return MAX_RULE_SEGMENTS * 4;
}

export interface RuleSegmentViews {
  ruleI32: Int32Array;
  ruleF64: Float64Array;
  procF64: Float64Array;
  /** The segment's number (slot >> RULE_SHIFT): its place in `decisionEpochs`. */
  segment: number;
  /** Every segment's decision epoch (one array shared by all segments of the tables). */
  decisionEpochs: Int32Array;
}

/**
 * Views of rule segment number `segment`. `decisionEpochs`: a view of the tables' epochs buffer;
 * a thread that never publishes decisions (the metrics render thread) may pass an empty array,
 * on which a publish would throw.
 */
export function ruleSegmentViews(sab: SharedArrayBuffer, segment: number, decisionEpochs: Int32Array): RuleSegmentViews {
  const n = RULES_PER_SEGMENT;
  const i32Bytes = n * RULE_I32_STRIDE * 4;
  const f64Bytes = n * RULE_F64_STRIDE * 8;
  return {
    segment,
    decisionEpochs,
    ruleI32: new Int32Array(sab, 0, n * RULE_I32_STRIDE),
    ruleF64: new Float64Array(sab, i32Bytes, n * RULE_F64_STRIDE),
    procF64: new Float64Array(sab, i32Bytes + f64Bytes, n * PROCS_PER_RULE * PROC_F64_STRIDE),
  };
}

/**
 * A window segment, in this order: what every window uses (latency sums and their epochs, the
 * compact header and ring), then the dense buckets only promoted windows touch. Every part's
 * size is a multiple of 8 bytes (WINDOWS_PER_SEGMENT is), so each view is aligned.
 */
const WINDOW_PARTS = {
  latSum: WINDOWS_PER_SEGMENT * LAT_BUCKETS * 8,
  latEpoch: WINDOWS_PER_SEGMENT * LAT_BUCKETS * 4,
  ringHdr: WINDOWS_PER_SEGMENT * RH_STRIDE * 4,
  ring: WINDOWS_PER_SEGMENT * RING_EVENTS * 4,
  countHdr: WINDOWS_PER_SEGMENT * COUNT_BUCKETS * CB_STRIDE * 4,
  latBins: WINDOWS_PER_SEGMENT * LAT_BUCKETS * LAT_BINS * 2,
};

export function windowSegmentBytes(): number {
  const p = WINDOW_PARTS;
  return p.latSum + p.latEpoch + p.ringHdr + p.ring + p.countHdr + p.latBins;
}

export interface WindowSegmentViews {
  /** Both forms: the latency sum of each 5-second bucket and the epoch it belongs to. */
  latSum: Float64Array;
  latEpoch: Int32Array;
  /** Compact form: RH_* per window, and its ring of RING_EVENTS event words. */
  ringHdr: Int32Array;
  ring: Uint32Array;
  /** Dense form: count buckets and latency histograms. */
  countHdr: Int32Array;
  latBins: Uint16Array;
  /**
   * The same bins as 32-bit words, two bins a word (a bucket's 280 bins are 140 whole words,
   * 4-byte aligned): readLatency skips a pair of empty bins with one test.
   */
  latBins32: Uint32Array;
}

export function windowSegmentViews(sab: SharedArrayBuffer): WindowSegmentViews {
  const p = WINDOW_PARTS;
  const at = { latSum: 0, latEpoch: p.latSum, ringHdr: p.latSum + p.latEpoch, ring: p.latSum + p.latEpoch + p.ringHdr, countHdr: 0, latBins: 0 };
  at.countHdr = at.ring + p.ring;
  at.latBins = at.countHdr + p.countHdr;
  return {
    latSum: new Float64Array(sab, at.latSum, p.latSum / 8),
    latEpoch: new Int32Array(sab, at.latEpoch, p.latEpoch / 4),
    ringHdr: new Int32Array(sab, at.ringHdr, p.ringHdr / 4),
    ring: new Uint32Array(sab, at.ring, p.ring / 4),
    countHdr: new Int32Array(sab, at.countHdr, p.countHdr / 4),
    latBins: new Uint16Array(sab, at.latBins, p.latBins / 2),
    latBins32: new Uint32Array(sab, at.latBins, p.latBins / 4),
  };
}

/** Latency (ms) → bin index. */
const LOG_GAMMA = Math.log(LAT_GAMMA);
export function latencyBin(ms: number): number {
  if (!(ms > 1)) return 0;
  const i = Math.ceil(Math.log(ms) / LOG_GAMMA);
  return i < LAT_BINS ? i : LAT_BINS - 1;
}
/** Bin index → representative latency (ms), the relative midpoint of the bin. */
export function binValue(i: number): number {
  return i === 0 ? 1 : (2 * Math.pow(LAT_GAMMA, i)) / (LAT_GAMMA + 1);
}
