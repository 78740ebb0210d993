/**
 * `npm run bench:memory`: the service's RSS with 100,000 rules, for each way rules reach it.
 * `npm run bench` loads its rule sets from a data directory seeded beforehand, three attributes
 * a rule; a service that is in use gets them through its API, and is scraped:
 *
 * - `restart`: the rules are in the data directory at start (seeded as `npm run bench` seeds
 *   them: over 5 tenants, an API key each);
 * - `onboard`: one tenant, ten `POST /v1/onboard` of 10,000 rules each (the most one request
 *   may generate): 250 ISO countries × 100 ISO currencies × 4 payment methods, three processors;
 * - `rules`: one tenant, `POST /v1/rules` 64 at a time, six attributes a rule (card type,
 *   transaction type and amount tier too), the spec's rule input with names and a weight;
 * - `outcomes`: as `restart`, then outcomes for every one of the rules (wrk, BENCH_MEMORY_OUTCOME_S
 *   (8) s at full speed, each rule reported ~2-5 times) and 12 s at rest (two evaluation cycles and their
 *   checkpoints) before the route run: every rule with its windows and engine state in use, as
 *   in a service whose every rule takes traffic.
 *
 * For each: RSS once the rules are in (after 5 s at rest), after a full-speed run of
 * `POST /v1/route` (wrk, BENCH_MEMORY_ROUTE_S, pinned as `npm run bench` pins), and after
 * BENCH_MEMORY_SCRAPES (10) `GET /metrics/` scrapes a second apart (gzip, as Prometheus
 * asks), with the anonymous / file-backed split (file-backed: node's own code and LMDB's
 * map). The service runs in its default configuration (Tier 3, so every rule has its failure
 * probability in /metrics/).
 *
 *   npm run bench:memory [-- --ways restart,onboard,rules] [-- --main <dist/src/main.js>] [-- --malloc-default]
 *   BENCH_MEMORY_RULES=100000 BENCH_MEMORY_ROUTE_S=10 BENCH_MEMORY_OUTCOME_S=8 BENCH_MEMORY_SCRAPES=10
 */
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ISO_3166_1_ALPHA2 } from '../src/data/iso-3166-1-alpha2.js';
import { ISO_4217 } from '../src/data/iso-4217.js';
import { parseCli } from './lib/cli.js';
import { table } from './lib/load.js';
import { DIST, startChild, type Child } from './lib/processes.js';
import { apiKeysFor, outcomeRequests, routeRequests, sampleRules, type BenchRequest } from './lib/requests.js';
import { scrapeOnce } from './lib/scrape-loop.js';
import { seed } from './lib/seed.js';
import { pinSelf, requireWrk, runWrk } from './lib/wrk.js';

const RULES = Number(process.env.BENCH_MEMORY_RULES ?? 100_000);
const ROUTE_S = Number(process.env.BENCH_MEMORY_ROUTE_S ?? 10);
/** The `outcomes` way's full-speed outcome run: long enough for every rule to be reported on a busy host. */
const OUTCOME_S = Number(process.env.BENCH_MEMORY_OUTCOME_S ?? 8);
/** Scrapes, a second apart: what a scrape leaves grows over the first few (the render thread's heap). */
const SCRAPES = Number(process.env.BENCH_MEMORY_SCRAPES ?? 10);
const SERVER_CPU = process.env.BENCH_SERVER_CPU ?? '1';
const GENERATOR_CPU = process.env.BENCH_GENERATOR_CPU ?? '0';
const RESULTS = fileURLToPath(new URL('../../bench/results/', import.meta.url));
const WAYS = ['restart', 'onboard', 'rules', 'outcomes'] as const;
type Way = (typeof WAYS)[number];

const o = parseCli({
  usage: 'npm run bench:memory [-- --ways restart,onboard,rules] [-- --main <dist/src/main.js>] [-- --malloc-default]',
  summary:
    'RSS of the service with 100,000 rules, for each way rules reach it (in the data directory at start, onboarded, created one by one): ' +
    'at rest, after a full-speed route run and after ten /metrics/ scrapes. Table on the terminal, JSON under bench/results/. Needs wrk.',
  options: { ways: { type: 'string', default: WAYS.join(',') }, main: { type: 'string' }, 'malloc-default': { type: 'boolean' } },
  help: {
    ways: `which of ${WAYS.join(', ')} to measure`,
    main: "another build's dist/src/main.js to measure (e.g. a worktree of an earlier commit)",
    'malloc-default': "run the service with glibc's default malloc settings, not the ones npm start sets (as builds before e61169c were run)",
  },
  notes: 'Environment: BENCH_MEMORY_RULES (100000), BENCH_MEMORY_ROUTE_S (10), BENCH_MEMORY_OUTCOME_S (8), BENCH_MEMORY_SCRAPES (10), BENCH_SERVER_CPU (1), BENCH_GENERATOR_CPU (0).',
});
const ways = o.ways.split(',') as Way[];
for (const w of ways) {
  if (!WAYS.includes(w)) {
    process.stderr.write(`--ways: unknown way "${w}" (one of ${WAYS.join(', ')})\n`);
    process.exit(2);
  }
}

const MAIN = o.main ?? join(DIST, 'src/main.js');
// An empty value counts as set (processes.ts adds nothing to it): glibc then keeps its defaults.
const mallocEnv: Record<string, string> = o['malloc-default'] ? { GLIBC_TUNABLES: '' } : {};
const KEY = 'key0';
const METHODS = ['card', 'wallet', 'bank_transfer', 'bnpl'];
const CARDS = ['visa', 'mastercard', 'amex', '*'];
const TYPES = ['one_time', 'recurring', '*'];
const TIERS = ['micro', 'standard', 'high_value', 'premium', '*'];
const COUNTRIES = ISO_3166_1_ALPHA2.slice(0, 250);
const CURRENCIES = ISO_4217.slice(0, 100);

interface Rss {
  rssMb: number;
  anonMb: number;
  fileMb: number;
}

function rss(svc: Child): Rss {
  const status = readFileSync(`/proc/${svc.proc.pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN) / 1024;
  return { rssMb: kb('VmRSS'), anonMb: kb('RssAnon'), fileMb: kb('RssFile') };
}

/**
 * Resident MB of the process's file mappings by file (node's own code, LMDB's map, ...), largest
 * first: what RssFile is made of. From /proc/<pid>/smaps.
 */
function fileMappings(svc: Child): string {
  const smaps = readFileSync(`/proc/${svc.proc.pid}/smaps`, 'utf8');
  const byFile = new Map<string, number>();
  let file: string | null = null;
  for (const line of smaps.split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (head) {
      file = head[1].startsWith('/') ? head[1] : null;
      continue;
    }
    const rssKb = /^Rss:\s+(\d+) kB/.exec(line);
    if (rssKb && file !== null) byFile.set(file, (byFile.get(file) ?? 0) + Number(rssKb[1]) / 1024);
  }
  return [...byFile.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3)
    .map(([f, mb]) => `${f.split('/').pop()} ${Math.round(mb)}`)
    .join(', ');
}

/**
 * The service's own account of its memory, from /metrics/ (prom-client's process metrics): the
 * V8 heap in use and the memory outside it (ArrayBuffers and SharedArrayBuffers: the shared
 * tables), in MB. Read after the measurements: this scrape is not counted.
 */
async function heapAndExternal(svc: Child): Promise<string> {
  const text = await (await fetch(`${svc.url}/metrics/`)).text();
  const mb = (name: string) => Math.round(Number(new RegExp(`^service_process_${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text)?.[1] ?? NaN) / 1048576);
  return `${mb('nodejs_heap_size_used_bytes')} / ${mb('nodejs_external_memory_bytes')}`;
}

async function post(svc: Child, path: string, body: unknown, want: number): Promise<unknown> {
  const r = await fetch(svc.url + path, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': KEY }, body: JSON.stringify(body) });
  const text = await r.text();
  if (r.status !== want) throw new Error(`${path}: ${r.status} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

/** Rule i of the `rules` way: distinct six-attribute keys, countries varying fastest. */
function sixAttributeRule(i: number) {
  const c = COUNTRIES[i % COUNTRIES.length];
  const k = Math.floor(i / COUNTRIES.length);
  const p = i % 7;
  return {
    rule_id: `rule_${i}`,
    attributes: [c, CURRENCIES[k % 10], METHODS[Math.floor(k / 10) % 4], CARDS[Math.floor(k / 40) % 4], TYPES[Math.floor(k / 160) % 3], TIERS[Math.floor(k / 480) % 5]],
    primary_id: `psp_${p}`,
    primary_name: `PSP ${p}`,
    secondary_id: `psp_${(p + 1) % 7}`,
    secondary_name: `PSP ${(p + 1) % 7}`,
    primary_weight: 0.9,
  };
}

/** A transaction that `attributes` accept (a wildcard card type becomes visa, a wildcard tier none). */
function transactionFor(a: string[]): string {
  return JSON.stringify({
    country: a[0],
    currency: a[1],
    payment_method: a[2],
    card_type: a[3] === '*' ? 'visa' : a[3],
    transaction_type: a[4] === '*' ? 'one_time' : a[4],
    ...(a[5] === '*' ? { amount: 42 } : { amount_tier: a[5] }),
  });
}

const route = (body: string): BenchRequest => ({ method: 'POST', path: '/v1/route', headers: { 'x-api-key': KEY }, body });

/** Starts the service for `way` with its rules in; returns it, the route requests it answers and, for `outcomes`, an outcome request for each rule. */
async function loaded(way: Way, dir: string): Promise<{ svc: Child; routes: BenchRequest[]; outcomes: BenchRequest[] }> {
  const env = { ...mallocEnv, SERVICE_DATA_DIR: dir, SERVICE_API_KEYS: `${KEY}:t0`, SERVICE_RATE_LIMIT_RPS: '0' };
  if (way === 'restart' || way === 'outcomes') {
    const { tenants, rules } = await seed(dir, { rules: RULES, tenants: 5 });
    const svc = await startChild(MAIN, { ...env, SERVICE_API_KEYS: apiKeysFor(tenants) }, 300_000, { cpus: SERVER_CPU });
    return { svc, routes: routeRequests(sampleRules(rules), tenants.length), outcomes: way === 'outcomes' ? outcomeRequests(rules, tenants.length) : [] };
  }
  const svc = await startChild(MAIN, env, 300_000, { cpus: SERVER_CPU });
  try {
    return { svc, routes: await created(way, svc), outcomes: [] };
  } catch (e) {
    await svc.stop();
    throw e;
  }
}

/** Creates the rules of the `onboard` or `rules` way through the API; returns route requests they answer. */
async function created(way: Way, svc: Child): Promise<BenchRequest[]> {
  if (way === 'onboard') {
    const perRequest = 25 * CURRENCIES.length * METHODS.length; // 10,000: the most one request may generate
    for (let g = 0; g * perRequest < RULES; g++) {
      const countries = COUNTRIES.slice(g * 25, g * 25 + 25);
      const processors = [0, 1, 2].map((p) => ({ processor_id: `psp_${p}`, name: `PSP ${p}`, countries, currencies: CURRENCIES, payment_methods: METHODS, priority: p + 1 }));
      await post(svc, '/v1/onboard', { processors, primary_weight: 0.9 }, 201);
    }
    return Array.from({ length: 200 }, (_, i) => route(transactionFor([COUNTRIES[(i * 7919) % COUNTRIES.length], CURRENCIES[i % CURRENCIES.length], METHODS[i % 4], '*', '*', '*'])));
  }
  let next = 0;
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (next < RULES) await post(svc, '/v1/rules', sixAttributeRule(next++), 201);
    }),
  );
  return Array.from({ length: 200 }, (_, i) => route(transactionFor(sixAttributeRule((i * 7919) % RULES).attributes)));
}

async function main(): Promise<void> {
  requireWrk();
  pinSelf(GENERATOR_CPU);
  const rows: Record<string, string | number>[] = [];
  for (const way of ways) {
    const dir = mkdtempSync(join(tmpdir(), 'prmem-'));
    const t0 = Date.now();
    const { svc, routes, outcomes } = await loaded(way, dir);
    const loadS = (Date.now() - t0) / 1000;
    try {
      await new Promise((r) => setTimeout(r, 5000));
      const rest = rss(svc);
      if (outcomes.length > 0) {
        const o = await runWrk({ url: svc.url, requests: outcomes, durationS: OUTCOME_S, connections: 64, cpus: GENERATOR_CPU });
        if (o.non2xx > 0 || o.errors > 0) throw new Error(`${way}: the outcome run had ${o.non2xx} non-2xx answers and ${o.errors} socket errors`);
        if (o.requests < outcomes.length) throw new Error(`${way}: ${o.requests} outcomes reached fewer than the ${outcomes.length} rules`);
        await new Promise((r) => setTimeout(r, 12_000));
      }
      const w = await runWrk({ url: svc.url, requests: routes, durationS: ROUTE_S, connections: 64, cpus: GENERATOR_CPU });
      if (w.non2xx > 0 || w.errors > 0) throw new Error(`${way}: the route run had ${w.non2xx} non-2xx answers and ${w.errors} socket errors`);
      const afterRoutes = rss(svc);
      for (let i = 0; i < SCRAPES; i++) {
        const status = await scrapeOnce(svc.url);
        if (status !== 200) throw new Error(`${way}: /metrics/ answered ${status}`);
        await new Promise((r) => setTimeout(r, 1000));
      }
      const afterScrapes = rss(svc);
      const mb = (x: number) => Math.round(x);
      rows.push({
        way,
        rules: RULES,
        'loaded in s': Math.round(loadS * 10) / 10,
        'at rest MB': mb(rest.rssMb),
        'after routes MB': mb(afterRoutes.rssMb),
        'route req/s': Math.round(w.rps),
        [`after ${SCRAPES} scrapes MB`]: mb(afterScrapes.rssMb),
        'anon / file MB (after scrapes)': `${mb(afterScrapes.anonMb)} / ${mb(afterScrapes.fileMb)}`,
        'largest files, MB': fileMappings(svc),
        'heap used / external MB': await heapAndExternal(svc),
      });
      console.log(table([rows[rows.length - 1]]));
    } finally {
      await svc.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  console.log('\nService RSS with 100,000 rules, by the way they arrived:');
  console.log(table(rows));
  mkdirSync(RESULTS, { recursive: true });
  const file = join(RESULTS, `memory-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  const settings = { rules: RULES, routeS: ROUTE_S, scrapes: SCRAPES, serverCpu: SERVER_CPU, generatorCpu: GENERATOR_CPU, main: MAIN, mallocDefault: o['malloc-default'] === true };
  writeFileSync(file, JSON.stringify({ at: new Date().toISOString(), settings, rows }, null, 2));
  console.log(`results: ${file}`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
