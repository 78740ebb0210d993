/**
 * `node dist/bench/profile-breakdown.js <file.cpuprofile> [...]`: where the front thread's CPU
 * goes on the route and outcome paths, from a V8 CPU profile of the service under load
 * (`npm run bench -- --profile` writes them to bench/results/profiles/).
 *
 * Each sample is charged to the stage of the deepest frame on its stack that names one
 * (a frame's own function and file decide; native frames such as JSON.parse are charged by
 * name). Idle time and other endpoints are left out of the percentages of the request path.
 */
import { readFileSync } from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Stages in the order a request passes them; the first rule that matches a frame wins. */
const STAGES: { stage: string; test: (f: CallFrame) => boolean }[] = [
  { stage: 'metrics', test: (f) => /request-metrics|metrics\/registry/.test(f.url) || (/router/.test(f.url) && f.functionName === 'done') },
  { stage: 'serialisation + write', test: (f) => f.functionName === 'stringify' || /reply\.|serialize/.test(f.url) || ['reply', 'send', 'cork', 'writeStatus', 'writeHeader', 'end'].includes(f.functionName) },
  { stage: 'decision', test: (f) => /shared\/decision|routing\/outcome|shared\/window|fast-path|engine-service|classify/.test(f.url) || f.functionName === 'decide' || f.functionName === 'random' },
  { stage: 'trie walk', test: (f) => /routing\/trie|routing\/decide|amount-tier/.test(f.url) },
  { stage: 'validation', test: (f) => /typebox|schemas\/|hot-bodies|validat/.test(f.url) || /^check_|Check$/.test(f.functionName) },
  { stage: 'body read + JSON parse', test: (f) => /body\.|unicode\./.test(f.url) || f.functionName === 'parse' || /toString|utf8Slice|Buffer|from/.test(f.functionName) },
  { stage: 'header + key lookup', test: (f) => /api-keys|rate-limit|cors/.test(f.url) || ['getHeader', 'getMethod', 'getQuery', 'getUrl', 'hash', 'begin', 'onAborted'].includes(f.functionName) },
  { stage: 'handler + router glue', test: (f) => /http\/router|http\/resources\/routing|app-context/.test(f.url) },
];
const IDLE = new Set(['(idle)', '(program)', '(garbage collector)']);

export function breakdown(p: Profile): { stage: string; ms: number; share: number }[] {
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const n of p.nodes) {
    byId.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  const stageOf = new Map<number, string>();
  const resolve = (id: number): string => {
    const known = stageOf.get(id);
    if (known !== undefined) return known;
    const f = byId.get(id)!.callFrame;
    let s: string;
    if (IDLE.has(f.functionName)) s = f.functionName;
    else {
      const own = STAGES.find((r) => r.test(f))?.stage;
      const up = parent.has(id) ? resolve(parent.get(id)!) : 'other';
      // The deepest stage-naming frame wins, except that a native frame (no url) below a
      // request stage takes that stage when it names none itself.
      s = own ?? up;
    }
    stageOf.set(id, s);
    return s;
  };
  const ms = new Map<string, number>();
  for (let i = 0; i < p.samples.length; i++) {
    const s = resolve(p.samples[i]);
    ms.set(s, (ms.get(s) ?? 0) + p.timeDeltas[i] / 1000);
  }
  const busy = [...ms].filter(([s]) => s !== '(idle)').reduce((a, [, v]) => a + v, 0);
  return [...ms]
    .filter(([s]) => s !== '(idle)')
    .map(([stage, v]) => ({ stage, ms: Math.round(v), share: Math.round((v / busy) * 1000) / 10 }))
    .sort((a, b) => b.ms - a.ms);
}

function main(): void {
  for (const file of process.argv.slice(2)) {
    const rows = breakdown(JSON.parse(readFileSync(file, 'utf8')) as Profile);
    console.log(`\n${file}`);
    for (const r of rows) console.log(`${r.stage.padEnd(28)} ${String(r.ms).padStart(7)} ms  ${String(r.share).padStart(5)} %`);
  }
}

if (process.argv[1]?.endsWith('profile-breakdown.js')) main();
