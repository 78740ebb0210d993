#!/usr/bin/env node
/**
 * The import check: parses every import under src/ (type-only imports included: they tie the
 * modules' meaning together even when they vanish at run time) and reports
 *   - every import cycle between files, and
 *   - every import from a lower layer into a higher one (LAYERS below, lowest first).
 *
 *   node scripts/check-layers.mjs        prints the violations, exits 1 when there are any
 *
 * Run by test/unit/layers.test.ts, so the rule holds on every `npm test`. Plain JavaScript with
 * no dependency, so it runs without a build.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Layers, lowest first. A file may import files of its own layer and of lower layers only.
 * Entries are paths under src/: a folder (every file in it) or a single file; the longest
 * matching entry decides. CONTRIBUTING.md explains each layer.
 */
export const LAYERS = [
  // Shared-memory layout and accessors: what the front thread and the workers exchange.
  { name: 'shm', paths: ['shm'] },
  // Pure tier maths and stages (Tier 1 health failover, Tier 2 Foresight, Tier 3 Autopilot).
  { name: 'tiers', paths: ['tiers'] },
  // Leaves every layer above may use: errors, logging, the store, process configuration and
  // the parsers it needs, the metrics registry.
  {
    name: 'platform',
    paths: ['errors.ts', 'log.ts', 'startup-error.ts', 'front-turns.ts', 'detach-protector.ts', 'heap-growth.ts', 'gc-helpers.ts', 'data', 'process-guard.ts', 'fast-prototypes.ts', 'store', 'config.ts', 'cluster/cluster-config.ts', 'http/api-keys.ts', 'http/rate-limit.ts', 'metrics/registry.ts', 'metrics/request-metrics.ts'],
  },
  // The front thread's model: tenants and their rules, routing (trie, decide, outcome,
  // classify), request schemas, override records, webhook event names and address checks.
  { name: 'domain', paths: ['routing', 'tenants', 'schemas', 'overrides/effective.ts', 'webhooks/events.ts', 'webhooks/address.ts'] },
  // Stateful services over the store: rules, overrides, decisions, audit, shadow, onboarding, webhooks.
  { name: 'services', paths: ['rules', 'overrides', 'decisions', 'audit', 'shadow', 'onboarding', 'webhooks', 'readiness.ts'] },
  // Cluster mode over Redis: lease, outcome delta shipping and merging, the decision table;
  // the engine drives it, it reads and writes the shared tables of the tenants' rules.
  { name: 'cluster', paths: ['cluster'] },
  // The evaluation engine: scheduler, worker pool (engine/worker), engine service, checkpoints.
  { name: 'engine', paths: ['engine'] },
  // Gauges read at scrape time from the engine and the store.
  { name: 'observability', paths: ['metrics'] },
  // The HTTP API: router, endpoints, the handlers' context, the OpenAPI document.
  { name: 'http', paths: ['http', 'app-context.ts', 'schemas/openapi.ts'] },
  // Start-up: assembles everything.
  { name: 'assembly', paths: ['service.ts', 'main.ts', 'usage.ts', 'front-warm-up.ts'] },
];

/**
 * The pure layers import no package and no Node built-in: they compute over memory they are
 * given. The one exception reads the Foresight model file once per thread, on first use.
 */
const PURE_LAYERS = new Set(['shm', 'tiers']);
const PURE_EXCEPTIONS = new Map([['tiers/foresight/model.ts', new Set(['node:fs', 'node:path', 'node:url'])]]);

function walk(dir, out) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (p.endsWith('.ts') && !p.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

// import/export ... from '...', import '...', import('...')
const IMPORT_RE = /(?:^|[\s;])(?:import|export)\s[^'"`;]*?from\s*['"]([^'"]+)['"]|(?:^|[\s;])import\s*['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

/** Import specifiers of `file` (comments stripped). */
function specifiersOf(file) {
  const text = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"])\/\/.*$/gm, '$1');
  return [...text.matchAll(IMPORT_RE)].map((m) => m[1] ?? m[2] ?? m[3]);
}

/** Relative imports of `file`, resolved to .ts files (absolute paths). */
export function importsOf(file) {
  return specifiersOf(file)
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => resolve(dirname(file), spec.replace(/\.js$/, '.ts')));
}

export function layerOf(rel) {
  let best = null;
  let bestLen = -1;
  LAYERS.forEach((layer, rank) => {
    for (const p of layer.paths) {
      if ((rel === p || rel.startsWith(p + '/')) && p.length > bestLen) {
        best = rank;
        bestLen = p.length;
      }
    }
  });
  return best;
}

/** Everything wrong with the import graph under src/, as readable lines; empty when clean. */
export function checkLayers(root = ROOT) {
  const src = join(root, 'src');
  const files = walk(src, []);
  const rel = (f) => relative(src, f).split(sep).join('/');
  const graph = new Map(files.map((f) => [f, importsOf(f).filter((t) => t.startsWith(src + sep))]));
  const problems = [];

  for (const f of files) {
    const lf = layerOf(rel(f));
    if (lf === null) {
      problems.push(`src/${rel(f)}: in no layer (add it to LAYERS in scripts/check-layers.mjs)`);
      continue;
    }
    if (PURE_LAYERS.has(LAYERS[lf].name)) {
      for (const spec of specifiersOf(f)) {
        if (spec.startsWith('.') || PURE_EXCEPTIONS.get(rel(f))?.has(spec)) continue;
        problems.push(`src/${rel(f)} (${LAYERS[lf].name}, pure) imports "${spec}"`);
      }
    }
    for (const t of graph.get(f)) {
      if (!graph.has(t)) {
        problems.push(`src/${rel(f)}: imports src/${rel(t)}, which does not exist`);
        continue;
      }
      const lt = layerOf(rel(t));
      if (lt !== null && lt > lf) problems.push(`src/${rel(f)} (${LAYERS[lf].name}) imports src/${rel(t)} (${LAYERS[lt].name}, a higher layer)`);
    }
  }

  // Cycles: Tarjan's strongly connected components; each component of more than one file
  // (or a file importing itself) is reported with one cycle through it.
  let index = 0;
  const idx = new Map();
  const low = new Map();
  const stack = [];
  const on = new Set();
  const sccs = [];
  const strong = (v) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!idx.has(w)) {
        strong(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const c = [];
      let w;
      do {
        w = stack.pop();
        on.delete(w);
        c.push(w);
      } while (w !== v);
      if (c.length > 1 || graph.get(v).includes(v)) sccs.push(c);
    }
  };
  for (const f of files) if (!idx.has(f)) strong(f);
  for (const c of sccs) {
    const inC = new Set(c);
    // Shortest cycle from c[0] back to itself inside the component (breadth first).
    const prev = new Map([[c[0], null]]);
    const queue = [c[0]];
    let end = null;
    while (queue.length > 0 && end === null) {
      const v = queue.shift();
      for (const w of graph.get(v)) {
        if (!inC.has(w)) continue;
        if (w === c[0]) {
          end = v;
          break;
        }
        if (!prev.has(w)) {
          prev.set(w, v);
          queue.push(w);
        }
      }
    }
    const path = [];
    for (let v = end; v !== null; v = prev.get(v)) path.unshift(`src/${rel(v)}`);
    problems.push(`import cycle: ${path.join(' → ')} → src/${rel(c[0])}`);
  }
  return problems;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    process.stdout.write('Usage: node scripts/check-layers.mjs\n\nReports import cycles and imports from a lower layer into a higher one under src/\n(layers: see LAYERS in the script and CONTRIBUTING.md). Exits 1 when there are any.\n');
  } else {
    const problems = checkLayers();
    for (const p of problems) process.stdout.write(`${p}\n`);
    process.stdout.write(problems.length === 0 ? 'imports: no cycle, no upward import\n' : `${problems.length} problem(s)\n`);
    process.exitCode = problems.length === 0 ? 0 : 1;
  }
}
