/**
 * The seqlock over a rule's published health as a whole (RI_HEALTH_SEQ, see layout.ts): the
 * worker brackets one evaluation's writes to both processor rows and the decision fields, and
 * a health read repeats until it saw none of them in progress.
 */
import { RI_HEALTH_SEQ, RULE_I32_STRIDE, type RuleSegmentViews } from './layout.js';

/**
 * A read that keeps meeting writes gives up after this long and answers with one more read,
 * unchecked (no worse than no lock). A rule's evaluation writes for microseconds (tens with
 * the sequence model). A read that finds a write in progress sleeps until the writer's
 * notify (Atomics.wait, not a spin), so a writer descheduled mid-write on the core the front
 * thread shares gets that core back at once and finishes.
 */
const MAX_READ_WAIT_MS = 5;

/** Odd: a write in progress. Or-ing (not adding) the bit heals a seq left odd by a writer thread that died mid-write. */
export function beginHealthWrite(seg: RuleSegmentViews, i: number): void {
  Atomics.or(seg.ruleI32, i * RULE_I32_STRIDE + RI_HEALTH_SEQ, 1);
}

export function endHealthWrite(seg: RuleSegmentViews, i: number): void {
  const at = i * RULE_I32_STRIDE + RI_HEALTH_SEQ;
  Atomics.add(seg.ruleI32, at, 1); // even: consistent
  Atomics.notify(seg.ruleI32, at); // a health read waiting for this write (rare: no system call when none waits)
}

/** `read()` of the rule's health, repeated until no write overlapped it (see MAX_READ_WAIT_MS). */
export function readHealthConsistently<T>(seg: RuleSegmentViews, i: number, read: () => T): T {
  const at = i * RULE_I32_STRIDE + RI_HEALTH_SEQ;
  let giveUpAt = 0; // set at the first retry: the usual read costs no clock reading
  for (;;) {
    const before = Atomics.load(seg.ruleI32, at);
    if ((before & 1) === 0) {
      const value = read();
      if (Atomics.load(seg.ruleI32, at) === before) return value;
    }
    const now = performance.now();
    if (giveUpAt === 0) giveUpAt = now + MAX_READ_WAIT_MS;
    else if (now > giveUpAt) return read();
    // Sleep until the write in progress ends (returns at once if it already has).
    if ((before & 1) !== 0) Atomics.wait(seg.ruleI32, at, before, giveUpAt - now);
  }
}
