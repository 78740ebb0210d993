/**
 * Which changes of the feed this replica has applied. Change numbers come from a sequence,
 * taken when a write's transaction inserts its change row, so they become visible out of
 * order: number 41 may commit after 42 was read. A number missing below the highest one
 * read is a gap: it is read again at every poll until it shows up or GAP_WAIT_MS has passed
 * (then its transaction rolled back: a write refused by a unique key, or a failed one; every
 * write's transaction is bounded by the statement timeout, well under GAP_WAIT_MS).
 */
export const GAP_WAIT_MS = 10_000;

export class ChangeCursor {
  /** Every change up to here is applied or given up on. */
  private settled: number;
  /** Changes above `settled` already applied. */
  private readonly seen = new Set<number>();
  /** Missing numbers above `settled`, with when they were first missed. */
  private readonly gaps = new Map<number, number>();
  private highest: number;

  constructor(start: number) {
    this.settled = start;
    this.highest = start;
  }

  /** Read the feed strictly after this number. */
  from(): number {
    return this.settled;
  }

  /** True when the change is new (to be applied); records it as applied. */
  take(seq: number): boolean {
    if (seq <= this.settled || this.seen.has(seq)) return false;
    this.seen.add(seq);
    this.gaps.delete(seq);
    if (seq > this.highest) this.highest = seq;
    return true;
  }

  /** After a poll: records new gaps, gives up on old ones, and moves `settled` up. */
  advance(nowMs: number): void {
    for (let s = this.settled + 1; s < this.highest; s++) {
      if (!this.seen.has(s) && !this.gaps.has(s)) this.gaps.set(s, nowMs);
    }
    for (;;) {
      const next = this.settled + 1;
      if (next > this.highest) break;
      if (this.seen.delete(next)) {
        this.settled = next;
        continue;
      }
      const since = this.gaps.get(next);
      if (since !== undefined && nowMs - since >= GAP_WAIT_MS) {
        this.gaps.delete(next);
        this.settled = next;
        continue;
      }
      break;
    }
  }

  /** Open gaps (metrics, tests). */
  gapCount(): number {
    return this.gaps.size;
  }
}
