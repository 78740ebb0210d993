/** Per-second counters of the live simulator and the progress line printed from them. */
import type { Outcome } from './processor.js';

const increment = (m: Map<string, number>, key: string): void => {
  m.set(key, (m.get(key) ?? 0) + 1);
};

export class SecondStats {
  private readonly routedTo = new Map<string, number>();
  private readonly sources = new Map<string, number>();
  private routedCount = 0;
  private failureProbSum = 0;
  private failureProbCount = 0;
  private reported = 0;
  private technicalErrors = 0;
  private declines = 0;
  private httpErrors = 0;
  private lastHttpError = '';

  routed(processorId: string, decisionSource: string, failureProbability: number | null): void {
    this.routedCount++;
    increment(this.routedTo, processorId);
    increment(this.sources, decisionSource);
    if (failureProbability !== null) {
      this.failureProbSum += failureProbability;
      this.failureProbCount++;
    }
  }

  /** An outcome was delivered to the engine. */
  outcomeReported(outcome: Outcome): void {
    this.reported++;
    if (outcome.kind === 'technical_error') this.technicalErrors++;
    if (outcome.kind === 'declined') this.declines++;
  }

  httpError(message: string): void {
    this.httpErrors++;
    this.lastHttpError = message;
  }

  /** One progress line; `labels` names the known processors in display order. */
  line(elapsedS: number, phase: string, labels: ReadonlyArray<readonly [string, string]>): string {
    const known = new Set(labels.map(([id]) => id));
    const share = (n: number): string => `${Math.round((100 * n) / Math.max(this.routedCount, 1))}%`.padStart(4);
    const shares = labels.map(([id, label]) => `${label} ${share(this.routedTo.get(id) ?? 0)}`);
    const unknown = [...this.routedTo].filter(([id]) => !known.has(id));
    if (unknown.length > 0) shares.push(`other ${share(unknown.reduce((s, [, n]) => s + n, 0))}`);
    const sources = [...this.sources].map(([s, n]) => `${s}:${n}`).join(',') || '-';
    const pFail = this.failureProbCount > 0 ? ` p_fail ${(this.failureProbSum / this.failureProbCount).toFixed(2)}` : '';
    const http = this.httpErrors > 0 ? `  HTTP errors ${this.httpErrors} (${this.lastHttpError})` : '';
    return (
      `${String(Math.floor(elapsedS)).padStart(5)}s  ${phase.padEnd(16)} ${shares.join('  ')}  ` +
      `| errors ${this.technicalErrors}/${this.reported} declines ${this.declines} | source ${sources}${pFail}${http}`
    );
  }
}
