/**
 * Prints the Foresight model card's metrics tables (markdown) for a trained model.
 *
 *   npm run build && node dist/bench/foresight-eval.js [--model models/foresight-gru.json] [--seeds 10] [--noise-hours 4]
 *
 * Everything runs on held-out seeds through the real engine in virtual time (see
 * bench/train/evaluation.ts); a full run takes a few minutes on 2 cores.
 */
import { readFileSync } from 'node:fs';
import { parseCli } from './lib/cli.js';
import { defaultModelPath, type ForesightModelJson } from '../src/tiers/foresight/model.js';
import { DEFAULT_FORESIGHT_CONFIG } from '../src/tiers/foresight/policy.js';
import { evaluate, type Evaluation } from './train/evaluation.js';

const fmt = (v: number | null, digits = 1): string => (v === null || Number.isNaN(v) ? 'n/a' : v.toFixed(digits));

export function formatEvaluation(e: Evaluation): string {
  const out: string[] = [];
  const s = e.steps;
  out.push('### Step level (held-out test split)', '');
  out.push('| metric | GRU | trend baseline |', '|---|---|---|');
  out.push(`| PR-AUC (average precision) | ${fmt(s.prAucGru, 3)} | ${fmt(s.prAucTrend, 3)} |`);
  out.push(`| expected calibration error (10 bins) | ${fmt(s.ece, 4)} | |`);
  out.push(`| Brier score | ${fmt(s.brier, 4)} | |`);
  out.push(`| log loss | ${fmt(s.logLoss, 4)} | |`);
  out.push('', `${s.steps} labelled steps, ${s.positives} positive (error rate above the failover threshold within 60 s).`, '');

  out.push('### Lead time before the Tier 1 failover, ramp-120 (closed loop)', '');
  out.push('| rate | runs | median lead (s) | min | max | no lead | traffic away: Tier 1 alone (s after incident start) | with Foresight |');
  out.push('|---|---|---|---|---|---|---|---|');
  for (const l of e.lead) {
    out.push(`| ${l.rate} tx/s | ${l.runs} | ${fmt(l.medianS)} | ${fmt(l.minS)} | ${fmt(l.maxS)} | ${l.missed} | ${fmt(l.awayTier1S)} | ${fmt(l.awayTier2S)} |`);
  }
  out.push('');

  out.push('### Needless shifts (prediction moved traffic, no Tier 1 failover followed)', '');
  out.push('| scenario | runs (2/20/100 tx/s) | processor-days | shift episodes | of which traffic left (share < 0.5) | per processor-day |');
  out.push('|---|---|---|---|---|---|');
  for (const n of e.needless) {
    out.push(`| ${n.scenario} | ${n.runs} | ${fmt(n.processorDays, 3)} | ${n.episodes} | ${n.awayEpisodes} | ${fmt(n.episodes / n.processorDays, 2)} |`);
  }
  out.push(`| **all** | | ${fmt(e.needless.reduce((a, n) => a + n.processorDays, 0), 3)} | ${e.needless.reduce((a, n) => a + n.episodes, 0)} | | **${fmt(e.needlessPerDay, 2)}** |`, '');

  out.push('### Scenarios, Tier 1 alone vs with Foresight (Tier 2), incident at 120 s, mean of held-out seeds', '');
  out.push('| scenario | rate | failed in incident T1 | T2 | traffic away T1 (s) | T2 (s) | needless shifts T2 | false failovers T1 | T2 |');
  out.push('|---|---|---|---|---|---|---|---|---|');
  for (const r of e.scenarios) {
    out.push(
      `| ${r.scenario} | ${r.rate} | ${fmt(r.failedTier1)} | ${fmt(r.failedTier2)} | ${fmt(r.awayTier1S)} | ${fmt(r.awayTier2S)} | ${fmt(r.needlessTier2)} | ${fmt(r.falseFailoversTier1)} | ${fmt(r.falseFailoversTier2)} |`,
    );
  }
  return out.join('\n');
}

async function main(): Promise<void> {
  const values = parseCli({
    usage: 'node dist/bench/foresight-eval.js [options]',
    summary: 'Prints the Foresight model card\'s metrics tables (markdown) for a trained model, on held-out seeds through the real engine in virtual time (a few minutes).',
    options: {
      model: { type: 'string' },
      seeds: { type: 'string', default: '10' },
      'noise-hours': { type: 'string', default: '4' },
    },
    help: { model: 'model file (default models/foresight-gru.json)', seeds: 'held-out seeds', 'noise-hours': 'simulated hours of steady noise runs' },
  });
  const path = values.model ?? defaultModelPath();
  const json = JSON.parse(readFileSync(path, 'utf8')) as ForesightModelJson;
  const seeds = Number(values.seeds);
  const noiseHours = Number(values['noise-hours']);
  if (!(Number.isInteger(seeds) && seeds > 0) || !(noiseHours > 0)) throw new Error('--seeds must be a positive integer, --noise-hours positive');
  const t0 = performance.now();
  const e = await evaluate(json, { seeds, noiseHours, log: (l) => console.error(l) });
  const cfg = DEFAULT_FORESIGHT_CONFIG;
  console.log(`## Foresight evaluation: ${path}`);
  console.log(`action threshold ${cfg.actionThreshold}, shift gain ${cfg.shiftGain}, floor ${cfg.minPrimaryShare}; ${seeds} seeds, ${noiseHours} h noise runs\n`);
  console.log(formatEvaluation(e));
  console.error(`evaluation took ${((performance.now() - t0) / 1000).toFixed(0)} s`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.stack ?? err.message : err);
  process.exit(1);
});
