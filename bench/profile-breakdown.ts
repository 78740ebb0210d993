/**
 * `node dist/bench/profile-breakdown.js <file.cpuprofile> [...]`: where the front thread's CPU
 * goes on the route and outcome paths, from a V8 CPU profile of the service under load
 * (`npm run bench -- --profile` writes them to bench/results/profiles/).
 *
 * Each sample is charged to the stage of the deepest frame on its stack that names one
 * (a frame's own function and file decide). Shares are of the request path's samples: idle
 * time, start-up and the worker threads' work are left out; "(program)" is mostly native uWS
 * work (socket reads and writes, HTTP parsing), "(garbage collector)" the young-generation GC.
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
  startTime: number;
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/**
 * Stages in the order a request passes them. A frame is matched by its file and function
 * name; the first rule that matches wins. Native built-ins (JSON.parse, JSON.stringify,
 * Buffer#toString) have no frame of their own: they count in their caller's stage, which is
 * why the profiles are taken with --no-turbo-inlining (callers keep their own frames).
 */
const STAGES: { stage: string; test: (f: CallFrame) => boolean }[] = [
  { stage: 'metrics', test: (f) => /request-metrics|metrics\/registry/.test(f.url) || (/http\/router/.test(f.url) && f.functionName === 'done') },
  { stage: 'serialisation + write', test: (f) => /http\/reply|json-writers/.test(f.url) || (/http\/router/.test(f.url) && f.functionName === 'reply') || ['stringify', 'writeStatus', 'writeHeader', 'end', 'cork'].includes(f.functionName) },
  { stage: 'decision / recording', test: (f) => /shm\/decision|shm\/slots|routing\/outcome|shm\/window|early-evaluation|engine-service|classify|shadow/.test(f.url) || (/routing\/decide/.test(f.url) && /decide/.test(f.functionName)) || f.functionName === 'random' },
  { stage: 'trie walk', test: (f) => /routing\/trie|routing\/decide|amount-tier/.test(f.url) },
  { stage: 'validation', test: (f) => /typebox|schemas\/|hot-bodies/.test(f.url) || (f.url === '' && /^check|^Check/.test(f.functionName)) },
  { stage: 'body read + JSON parse', test: (f) => /http\/body|http\/unicode|http\/flat-json|http\/decode-body/.test(f.url) || (/http\/router/.test(f.url) && f.functionName === '') || (/http\/hot-path/.test(f.url) && f.functionName === 'bodyDone') || ['parse', 'toString', 'utf8Slice', 'from', 'fromArrayLike', 'FastBuffer'].includes(f.functionName) },
  { stage: 'header + key lookup', test: (f) => /api-keys|rate-limit|cors/.test(f.url) || (/http\/router/.test(f.url) && ['handle', 'begin', 'authorize', 'serveHot'].includes(f.functionName)) || ['getHeader', 'getMethod', 'getQuery', 'getParameter', 'hash', 'onAborted', 'onData'].includes(f.functionName) },
  { stage: 'handler + router glue', test: (f) => /http\/router|http\/hot-path|http\/exchange|http\/resources\/routing|app-context|tenants\/registry/.test(f.url) },
];
const IDLE = new Set(['(idle)', '(program)', '(garbage collector)']);

/** Samples per stage and their share of the request path's samples (idle, start-up and other work left out). */
export function breakdown(p: Profile, windowUs?: [number, number]): { stage: string; samples: number; share: number }[] {
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
  // Samples are counted, not their time deltas: on a busy machine a delta also holds the time
  // the thread waited for a core, charged to whatever it ran next.
  // `windowUs` (CLOCK_MONOTONIC µs, the clock of V8's sample timestamps and of
  // process.hrtime) keeps the samples of the measured load only: start-up (loading 100,000
  // rules into the tries) and warm-up are left out.
  const ms = new Map<string, number>();
  let t = p.startTime;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i];
    if (windowUs && (t < windowUs[0] || t > windowUs[1])) continue;
    const s = resolve(p.samples[i]);
    ms.set(s, (ms.get(s) ?? 0) + 1);
  }
  const onPath = (s: string) => STAGES.some((r) => r.stage === s) || s === '(garbage collector)' || s === '(program)';
  const busy = [...ms].filter(([s]) => onPath(s)).reduce((a, [, v]) => a + v, 0);
  return [...ms]
    .filter(([s]) => onPath(s))
    .map(([stage, v]) => ({ stage, samples: v, share: Math.round((v / busy) * 1000) / 10 }))
    .sort((a, b) => b.samples - a.samples);
}

function main(): void {
  for (const file of process.argv.slice(2)) {
    const rows = breakdown(JSON.parse(readFileSync(file, 'utf8')) as Profile);
    console.log(`\n${file}`);
    for (const r of rows) console.log(`${r.stage.padEnd(28)} ${String(r.samples).padStart(7)} samples ${String(r.share).padStart(5)} %`);
  }
}

if (process.argv[1]?.endsWith('profile-breakdown.js')) main();
