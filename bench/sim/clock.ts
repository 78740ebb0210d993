/**
 * Time sources. Engines under test take a Clock instead of calling Date.now() so the
 * driver can run them in virtual time: an hour of traffic in seconds, with no sleeping.
 */

export interface Clock {
  /** Milliseconds; only differences are meaningful. */
  now(): number;
}

/** Time that moves only when the driver advances it. */
export class VirtualClock implements Clock {
  constructor(private t = 0) {}

  now(): number {
    return this.t;
  }

  /** Moves time forward to `tMs`; going backwards is a driver bug and throws. */
  advanceTo(tMs: number): void {
    if (tMs < this.t) throw new Error(`VirtualClock cannot go back from ${this.t} to ${tMs}`);
    this.t = tMs;
  }
}

/** Real monotonic time (not affected by wall-clock adjustments), for live runs. */
export const monotonicClock: Clock = { now: () => performance.now() };
