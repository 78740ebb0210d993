/**
 * Training-only traffic perturbation. In service, Foresight itself moves traffic off a
 * primary it distrusts, so the primary's volume falls exactly when its error rate rises. A
 * model trained only on Tier 1 traces has seen that combination only around real failovers
 * and learns "volume dropped ⇒ failure": in closed loop it then feeds on its own shifts (a
 * bump it shifted away from looked ever worse). Cutting the primary's share at random times,
 * many of them during incidents and bumps, teaches it that volume alone means nothing; the
 * labels stay Tier 1's real decisions under the reduced traffic.
 */
import { DecisionSource } from '../../src/shm/layout.js';
import type { RuleStage } from '../../src/tiers/stage.js';
import type { Rng } from '../sim/rng.js';
import { RUN_START_MS } from './engine-run.js';

export interface ShareCut {
  startMs: number;
  endMs: number;
  share: number;
}

/** Cuts for one training trace: none for ~40 % of traces, else 1-3, half of them near the event at `eventMs`. */
export function drawCuts(rng: Rng, eventMs: number, configured: number): ShareCut[] {
  if (rng.next() < 0.4) return [];
  const n = 1 + Math.floor(rng.next() * 3);
  const cuts: ShareCut[] = [];
  for (let i = 0; i < n; i++) {
    const startMs = rng.next() < 0.5 ? eventMs + (rng.next() * 180_000 - 30_000) : rng.next() * (eventMs + 300_000);
    const len = 15_000 + rng.next() * 135_000;
    cuts.push({ startMs: Math.max(0, Math.round(startMs)), endMs: Math.round(startMs + len), share: 0.1 + rng.next() * Math.max(0, configured - 0.1) });
  }
  return cuts;
}

/** Applies the cuts to the decision (source stays `rules`); Tier 1 overrides still win in the pipeline. */
export function perturbStage(cuts: readonly ShareCut[]): RuleStage {
  return {
    name: 'train-share-cuts',
    enabled: () => cuts.length > 0,
    apply(ctx, decision) {
      const t = ctx.nowMs - RUN_START_MS;
      for (const c of cuts) {
        if (t >= c.startMs && t < c.endMs && c.share < decision.primaryShare) {
          decision.primaryShare = c.share;
          decision.source = DecisionSource.Rules;
        }
      }
    },
  };
}
