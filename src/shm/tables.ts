/**
 * The front thread's handle on the shared tables: allocates rule slots and outcome windows
 * in fixed-size SharedArrayBuffer segments (tables grow, never move), recycles freed ones,
 * and hands the current segment lists to workers with each task.
 */
import {
  PROCS_PER_RULE,
  RF_CONFIG_PRIMARY_WEIGHT,
  RF_FAILPROB_PRIMARY,
  RF_FAILPROB_SECONDARY,
  RF_PRIMARY_SHARE,
  RF_SAME_PROCESSOR,
  RI_ACTIVE,
  RI_COMMAND,
  RI_DECISION_SOURCE,
  RI_GENERATION,
  RI_RUN_PRIMARY,
  RI_RUN_SECONDARY,
  RI_REMOTE_RUN_PRIMARY,
  RI_REMOTE_RUN_SECONDARY,
  RI_WINDOW_PRIMARY,
  RI_WINDOW_SECONDARY,
  RF_ROUTED,
  RF_OUTCOMES,
  OUTCOME_RESULTS,
  RULES_PER_SEGMENT,
  WINDOW_SHIFT,
  DecisionSource,
  MAX_RULE_SEGMENTS,
  decisionEpochsBytes,
  ruleSegmentBytes,
  ruleSegmentViews,
  windowSegmentBytes,
  windowSegmentViews,
  type RuleSegmentViews,
  type WindowSegmentViews,
} from './layout.js';
import { clearRows } from './processor-rows.js';
import { RuleCounts } from './rule-counts.js';
import { clearWindow } from './window.js';
import { ruleF64Base, ruleI32Base, ruleSegment, ruleSegmentNumber, windowIndex, windowSegment } from './slots.js';

/** A memory page: only the epochs' pages a segment has touched are resident. */
const PAGE_BYTES = 4096;

export interface TableSegments {
  rules: SharedArrayBuffer[];
  windows: SharedArrayBuffer[];
  /** Every rule segment's decision epoch (layout.ts): one buffer for the life of the tables. */
  decisionEpochs: SharedArrayBuffer;
}

export class SharedTables {
  readonly ruleSegs: RuleSegmentViews[] = [];
  readonly windowSegs: WindowSegmentViews[] = [];
  private readonly ruleSabs: SharedArrayBuffer[] = [];
  private readonly windowSabs: SharedArrayBuffer[] = [];
  private readonly decisionEpochSab = new SharedArrayBuffer(decisionEpochsBytes());
  readonly decisionEpochs = new Int32Array(this.decisionEpochSab);
  /** Routes and outcomes counted on the front thread, added to the rules' rows in batches (rule-counts.ts). */
  readonly ruleCounts = new RuleCounts(this.ruleSegs);
  private readonly freeRules: number[] = [];
  private readonly freeWindows: number[] = [];
  private nextRule = 0;
  private nextWindow = 0;

  /** Current segment lists; SharedArrayBuffers are shared, not copied, when posted. */
  segments(): TableSegments {
    return { rules: this.ruleSabs, windows: this.windowSabs, decisionEpochs: this.decisionEpochSab };
  }

  ruleCapacity(): number {
    return this.ruleSabs.length * RULES_PER_SEGMENT;
  }

  /**
   * Takes a rule slot and initialises it for a new rule: configured weight, primary share
   * equal to it, both processors healthy (all-zero rows), no prediction or bandit output yet.
   */
  allocRule(primaryWeight: number, sameProcessor: boolean): number {
    let slot = this.freeRules.pop();
    const reused = slot !== undefined;
    if (slot === undefined) {
      slot = this.nextRule;
      const segment = ruleSegmentNumber(slot);
      if (segment >= this.ruleSabs.length) {
        if (segment >= MAX_RULE_SEGMENTS) throw new Error(`the shared tables hold at most ${MAX_RULE_SEGMENTS * RULES_PER_SEGMENT} rules`);
        const sab = new SharedArrayBuffer(ruleSegmentBytes());
        this.ruleSabs.push(sab);
        this.ruleSegs.push(ruleSegmentViews(sab, segment, this.decisionEpochs));
      }
      this.nextRule++;
    }
    const seg = ruleSegment(this.ruleSegs, slot);
    const { ruleI32, ruleF64 } = seg;
    const ib = ruleI32Base(slot);
    const fb = ruleF64Base(slot);
    Atomics.add(ruleI32, ib + RI_GENERATION, 1);
    ruleI32[ib + RI_DECISION_SOURCE] = DecisionSource.Rules;
    ruleI32[ib + RI_WINDOW_PRIMARY] = -1;
    ruleI32[ib + RI_WINDOW_SECONDARY] = -1;
    Atomics.store(ruleI32, ib + RI_RUN_PRIMARY, 0);
    Atomics.store(ruleI32, ib + RI_RUN_SECONDARY, 0);
    Atomics.store(ruleI32, ib + RI_REMOTE_RUN_PRIMARY, 0);
    Atomics.store(ruleI32, ib + RI_REMOTE_RUN_SECONDARY, 0);
    Atomics.store(ruleI32, ib + RI_COMMAND, 0);
    ruleF64[fb + RF_CONFIG_PRIMARY_WEIGHT] = primaryWeight;
    ruleF64[fb + RF_PRIMARY_SHARE] = sameProcessor ? 1 : primaryWeight;
    ruleF64[fb + RF_FAILPROB_PRIMARY] = NaN;
    ruleF64[fb + RF_FAILPROB_SECONDARY] = NaN;
    ruleF64[fb + RF_SAME_PROCESSOR] = sameProcessor ? 1 : 0;
    ruleF64.fill(0, fb + RF_ROUTED, fb + RF_OUTCOMES + PROCS_PER_RULE * OUTCOME_RESULTS);
    // Processor rows start all-zero, which reads as: healthy, never evaluated, no samples.
    // A fresh segment is already zero, and its untouched pages are never made resident, so
    // rules that see no traffic cost no memory for their engine state (processor-rows.ts).
    if (reused) clearRows(seg, slot);
    Atomics.store(ruleI32, ib + RI_ACTIVE, 1);
    return slot;
  }

  /**
   * Returns a rule slot and its windows to the free lists. The caller MUST ensure no worker
   * task is reading this slot (the engine defers frees until the tenant's task finishes).
   */
  freeRule(slot: number): void {
    const { ruleI32 } = ruleSegment(this.ruleSegs, slot);
    const ib = ruleI32Base(slot);
    Atomics.store(ruleI32, ib + RI_ACTIVE, 0);
    const wp = ruleI32[ib + RI_WINDOW_PRIMARY];
    const ws = ruleI32[ib + RI_WINDOW_SECONDARY];
    if (wp >= 0) this.freeWindows.push(wp);
    if (ws >= 0 && ws !== wp) this.freeWindows.push(ws);
    ruleI32[ib + RI_WINDOW_PRIMARY] = -1;
    ruleI32[ib + RI_WINDOW_SECONDARY] = -1;
    this.freeRules.push(slot);
  }

  /**
   * The outcome window of rule `slot`'s processor k (0 primary, 1 secondary), taken at its first
   * outcome. A self-fallback rule has one processor: both sides share its window.
   */
  windowOf(slot: number, k: 0 | 1, selfFallback: boolean): number {
    const { ruleI32 } = ruleSegment(this.ruleSegs, slot);
    const ib = ruleI32Base(slot);
    const field = ib + (k === 0 ? RI_WINDOW_PRIMARY : RI_WINDOW_SECONDARY);
    let w = ruleI32[field];
    if (w < 0) {
      ruleI32[field] = w = this.allocWindow();
      if (selfFallback) ruleI32[ib + (k === 0 ? RI_WINDOW_SECONDARY : RI_WINDOW_PRIMARY)] = w;
    }
    return w;
  }

  /** Takes a zeroed outcome window (all bucket epochs 0, i.e. stale). */
  allocWindow(): number {
    let w = this.freeWindows.pop();
    if (w === undefined) {
      w = this.nextWindow++;
      if (w >> WINDOW_SHIFT >= this.windowSabs.length) {
        const sab = new SharedArrayBuffer(windowSegmentBytes());
        this.windowSabs.push(sab);
        this.windowSegs.push(windowSegmentViews(sab));
      }
      return w;
    }
    clearWindow(windowSegment(this.windowSegs, w), windowIndex(w));
    return w;
  }

  /** Bytes held in shared memory, for the memory report (of the epochs' buffer, the pages its segments' epochs are on). */
  bytes(): number {
    const epochPages = Math.ceil((this.ruleSabs.length * Int32Array.BYTES_PER_ELEMENT) / PAGE_BYTES);
    return this.ruleSabs.length * ruleSegmentBytes() + this.windowSabs.length * windowSegmentBytes() + epochPages * PAGE_BYTES;
  }
}

