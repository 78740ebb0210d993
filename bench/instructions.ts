/**
 * `npm run bench:instructions`: machine instructions per route of the route path's JavaScript
 * (the plain decoder, the trie memo, pickSide and the reply), counted by valgrind's callgrind.
 *
 * Why: on a busy or unsteady host (issue 20's sixteenth pass: a route's CPU varied 13-28 µs
 * from one 2 s run to the next) timing cannot show a change of a few percent, and the same
 * code's instruction count can: with node's `--predictable` (one thread, no time-based
 * heuristics) it repeats within ~0.5%. The work runs over the bench's 200 route bodies (the
 * ones `npm run bench` sends), once with 300 rounds and once with 1,300; the difference over
 * 1,000 × 200 is the cost of one route in warm, optimised code, start-up and warm-up excluded.
 * Counts say nothing of caches, TLBs or the kernel: read them beside the benchmark, not
 * instead of it.
 *
 *   npm run bench:instructions [-- --part decode|match|route|http] [-- --other <dist dir>]
 *
 * `--part http` counts the whole request instead, in the real server process, beside bare uWS
 * (lib/http-instructions.ts): a few minutes per build.
 *
 * Needs valgrind (`apt-get install -y valgrind`). Each count takes about a minute.
 */
import { spawnSync } from 'node:child_process';
import { Buffer } from 'node:buffer';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseCli } from './lib/cli.js';
import { DIST } from './lib/processes.js';
import { routeRequests, sampleRules } from './lib/requests.js';
import { ruleSet } from './lib/seed.js';
import { countHttp } from './lib/http-instructions.js';
import { table } from './lib/load.js';

const PARTS = ['decode', 'match', 'route', 'http'] as const;
type Part = (typeof PARTS)[number];
const WARM_ROUNDS = 300;
const MEASURED_ROUNDS = 1000;
const BODIES = 200;

const o = parseCli({
  usage: 'npm run bench:instructions [-- --part decode|match|route|http] [-- --other <dist dir>]',
  summary:
    "Counts the machine instructions one route's JavaScript takes (callgrind, node --predictable): decode the body; " +
    'decode and match the rule; or the whole route without HTTP (decode, match, pickSide, reply bytes). ' +
    'With --other, the same for another build (a dist/ directory), and the ratio.',
  options: {
    part: { type: 'string', default: 'route' },
    other: { type: 'string' },
    run: { type: 'string' },
  },
  help: {
    part: `how much of the route to run: ${PARTS.join(', ')} (each includes the ones before; http: the whole request in the real server, route and outcome, beside bare uWS: lib/http-instructions.ts)`,
    other: "another build's dist/ directory to count too (e.g. a worktree of an earlier commit)",
    run: 'internal: ROUNDS:DIST, the work itself (what callgrind runs)',
  },
  notes:
    'Needs valgrind: apt-get install -y valgrind. Instructions, not time: caches, TLBs and the kernel are not in them.\n\n' +
    'Environment: BENCH_PROFILE_RULES (1000: the rules the service holds for --part http), BENCH_INSTRUCTIONS_REQUESTS (10000: requests counted for --part http), BENCH_INSTRUCTIONS_TOP (15: functions listed).',
});

const part = o.part as Part;
if (!PARTS.includes(part)) {
  process.stderr.write(`--part must be one of ${PARTS.join(', ')}\n`);
  process.exit(2);
}

/** The work: `rounds` passes over the bench's route bodies through `dist`'s modules. */
async function work(rounds: number, dist: string): Promise<void> {
  const load = (p: string) => import(pathToFileURL(join(dist, 'src', p)).href);
  const [plain, forms, decide, writers, shm, tenants] = await Promise.all([
    load('http/plain-body.js'),
    load('schemas/hot-bodies.js'),
    load('routing/decide.js'),
    load('http/json-writers.js'),
    load('shm/tables.js'),
    load('tenants/tenant.js'),
  ]);
  const rules = ruleSet(1000);
  const bodies = routeRequests(sampleRules(rules, BODIES), 1).map((r) => Buffer.from(r.body));
  const tables = new shm.SharedTables();
  const tenant = new tenants.Tenant('t0', tenants.settingsForTier(3, false));
  // `replies: null` for builds before the route cache (their LiveRule held its replies there).
  for (const record of rules) tenant.addRule({ record, slot: tables.allocRule(record.primary_weight, false), runStartedAt: [0, 0], override: null, cache: null, ...{ replies: null } });
  const form = forms.ROUTE_REQUEST_FORM;
  const route = (buf: Buffer): boolean => {
    const body = plain.decodePlainBody(form, buf);
    if (part === 'decode') return body !== undefined;
    // Builds since the route cache: the trie answers the rule's cache (matchRoute).
    if (typeof decide.matchRoute === 'function') {
      const route = decide.matchRoute(tenant, body);
      if (part === 'match') return route !== undefined;
      return writers.routeReplyBytes(route, decide.pickSide(tables, route, 0.5), true).length > 0;
    }
    const rule = decide.matchRule(tenant, body);
    if (part === 'match') return rule !== undefined;
    if (typeof decide.pickSide === 'function') return writers.routeReplyBytes(rule, decide.pickSide(tables, rule, 0.5), true).length > 0;
    // Builds before 72e49ea: decide() and the reply memo keyed by the rule's slot and side.
    const d = decide.decide(tables, rule, 0.5, true);
    return writers.routeReplyBytes(d, rule.slot * 2 + (d.processor_id === rule.record.primary_id ? 0 : 1)).length > 0;
  };
  let ok = 0;
  for (let r = 0; r < rounds; r++) for (const b of bodies) if (route(b)) ok++;
  if (ok !== rounds * bodies.length) throw new Error(`${rounds * bodies.length - ok} routes failed`);
}

/** Instructions callgrind counted for `rounds` rounds of the work on `dist`. */
function counted(rounds: number, dist: string): number {
  const self = join(DIST, 'bench', 'instructions.js');
  const r = spawnSync(
    'valgrind',
    ['--tool=callgrind', '--callgrind-out-file=/dev/null', process.execPath, '--predictable', '--hash-seed=1', '--random-seed=1', self, '--part', part, '--run', `${rounds}:${dist}`],
    { encoding: 'utf8' },
  );
  if (r.error) throw new Error(`valgrind did not run (${r.error.message}): apt-get install -y valgrind`);
  const m = /Collected\s*:\s*(\d+)/.exec(r.stderr);
  if (r.status !== 0 || !m) throw new Error(`the counted run failed (exit ${r.status}): ${r.stderr.slice(-500)}`);
  return Number(m[1]);
}

function perRoute(dist: string): number {
  return (counted(WARM_ROUNDS + MEASURED_ROUNDS, dist) - counted(WARM_ROUNDS, dist)) / (MEASURED_ROUNDS * BODIES);
}

if (part === 'http') {
  const counts = await countHttp(o.other === undefined ? [DIST] : [DIST, o.other]);
  const bare = counts[0].perRequest;
  const bareWithoutGc = bare - counts[0].gcPerRequest;
  console.log(
    table(
      counts.map((c) => ({
        target: c.target,
        'instructions / request': Math.round(c.perRequest),
        '× bare uWS': (c.perRequest / bare).toFixed(2),
        'of which GC': Math.round(c.gcPerRequest),
        'without GC': Math.round(c.perRequest - c.gcPerRequest),
        '× bare uWS without GC': ((c.perRequest - c.gcPerRequest) / bareWithoutGc).toFixed(2),
      })),
    ),
  );
  for (const c of counts) {
    console.log(`\n${c.target}: the costliest functions, instructions per request (self)`);
    console.log(table(c.top.map((t) => ({ function: t.name, 'per request': Math.round(t.perRequest) }))));
  }
} else if (o.run !== undefined) {
  const at = o.run.indexOf(':');
  await work(Number(o.run.slice(0, at)), o.run.slice(at + 1));
} else {
  const mine = perRoute(DIST);
  console.log(`${part}: ${Math.round(mine)} instructions per route (${DIST})`);
  if (o.other !== undefined) {
    const theirs = perRoute(o.other);
    console.log(`${part}: ${Math.round(theirs)} instructions per route (${o.other})`);
    console.log(`this / other: ${(mine / theirs).toFixed(3)}`);
  }
}
