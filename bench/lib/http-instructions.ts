/**
 * `npm run bench:instructions -- --part http`: machine instructions per request of the whole
 * HTTP path (uWS, V8's glue, the service's JavaScript), counted by callgrind in the real server
 * process: the service on 1,000 rules over 5 tenants (BENCH_PROFILE_RULES to change it, as for
 * bench:profile and bench:compare) answering POST /v1/route and POST /v1/outcome, and the bare
 * uWS ceiling (bare-uws.ts) answering the same requests.
 *
 * Why: on this project's virtual machines the time of a request varies by ±20% from one 2 s
 * run to the next, so a change of a few percent of the route path cannot be timed; its
 * instruction count, in a process that does nothing else, varies far less: the same build read
 * 30,242 and 31,866 per route in two runs of 10,000 requests, partly as a young collection
 * fell in the window or not (gcPerRequest below), and two counts of 20,000 by ~330. Count
 * more requests (BENCH_INSTRUCTIONS_REQUESTS=40000) and compare two builds in one run to see a
 * few percent; then time the change with compare-builds, since fewer instructions are not
 * always less time (issue 20's twenty-seventh pass: −263 instructions a route, 1.01× the CPU).
 * bench:instructions' other parts count the route's JavaScript in a loop; this one adds what a
 * loop leaves out: the header pass, uWS's calls into JavaScript, the body's typed
 * array, the reply's write. It counts the server's main thread (the front thread) only: the
 * pool's threads and the kernel are not in it, so read it beside `npm run bench`, not instead.
 *
 * How: valgrind starts the server with instrumentation off; 3,000 requests warm it up (the JIT
 * compiles the hot paths), instrumentation goes on, 500 more requests run, the counters are
 * zeroed, MEASURED requests run and the counters are dumped. The JIT's code is named from
 * node's --perf-basic-prof map. Eight keep-alive connections send one request at a time each,
 * with wrk's headers (Host, Content-Type, X-API-Key, Content-Length).
 *
 * valgrind cannot reserve the 64 GiB address range the LMDB store maps (its own address space
 * is smaller), so the service runs from a copy of dist/ whose LMDB_MAP_BYTES is 1 GiB, ample
 * for 100,000 rules; nothing else of the copy differs. The copy is made under bench/results/ (so
 * that node finds the project's node_modules) and removed at the end.
 */
import { spawn, spawnSync } from 'node:child_process';
import { Buffer } from 'node:buffer';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, waitFor } from './processes.js';
import { apiKeysFor, hotPathRequests, type BenchRequest } from './requests.js';
import { seed } from './seed.js';

const WARM_REQUESTS = 3000;
const SETTLE_REQUESTS = 500;
const MEASURED = Number(process.env.BENCH_INSTRUCTIONS_REQUESTS ?? 10_000);
const CONNECTIONS = 8;
/** The rule set the service is seeded with: whether a larger one costs instructions, or only memory, is read here. */
const RULES = Number(process.env.BENCH_PROFILE_RULES ?? 1000);
const TOP_FUNCTIONS = Number(process.env.BENCH_INSTRUCTIONS_TOP ?? 15);
const RESULTS = fileURLToPath(new URL('../../../bench/results/', import.meta.url));
/** valgrind names its control pipe after $HOST, which the service reads too: both sides must agree. */
const HOST = '127.0.0.1';

export interface HttpCount {
  target: string;
  perRequest: number;
  /**
   * Of perRequest, the garbage collector's (V8's heap functions on the front thread). A young
   * collection comes every ~20,000 requests and costs millions of instructions, so whether one
   * falls in the counted window moves the total by hundreds per request: compare builds by the
   * total without it.
   */
  gcPerRequest: number;
  /** Self instructions per request of the costliest functions (JIT code by its JavaScript name). */
  top: { name: string; perRequest: number }[];
}

/** A copy of `dist` that valgrind can run (see above), in a directory the caller removes. */
function callgrindCopy(dist: string): string {
  // The build's checkout in miniature: dist/, and beside it what the service reads from there
  // (its package.json for the version, models/ for Tier 2's model: tiers/foresight/model.ts).
  mkdirSync(RESULTS, { recursive: true }); // absent on a fresh clone: bench/results/ is not committed
  const copy = mkdtempSync(join(RESULTS, 'callgrind-'));
  const checkout = join(dist, '..');
  cpSync(dist, join(copy, 'dist'), { recursive: true });
  cpSync(join(checkout, 'models'), join(copy, 'models'), { recursive: true });
  cpSync(join(checkout, 'package.json'), join(copy, 'package.json'));
  const store = join(copy, 'dist', 'src', 'store', 'lmdb-store.js');
  const text = readFileSync(store, 'utf8');
  const patched = text.replace(/export const LMDB_MAP_BYTES = [^;]+;/, 'export const LMDB_MAP_BYTES = 2 ** 30;');
  if (patched === text) throw new Error(`${store}: LMDB_MAP_BYTES not found; this build cannot be counted`);
  writeFileSync(store, patched);
  return copy;
}

/** The raw bytes of each request, as wrk sends them. */
function rawRequests(reqs: readonly BenchRequest[], port: number): Buffer[] {
  return reqs.map((q) => {
    const headers = Object.entries({ 'Content-Type': 'application/json', ...q.headers })
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    const body = Buffer.from(q.body);
    return Buffer.concat([Buffer.from(`${q.method} ${q.path} HTTP/1.1\r\nHost: ${HOST}:${port}\r\n${headers}Content-Length: ${body.length}\r\n\r\n`), body]);
  });
}

/** Sends `n` of `raw` (in turn) over CONNECTIONS keep-alive connections; rejects on an answer that is not 2xx. */
function send(port: number, raw: readonly Buffer[], n: number): Promise<void> {
  let next = 0;
  const one = () =>
    new Promise<void>((resolve, reject) => {
      const sock = connect(port, HOST);
      let pending = Buffer.alloc(0);
      const write = () => {
        if (next >= n) {
          done = true;
          sock.destroy();
          return resolve();
        }
        sock.write(raw[next++ % raw.length]);
      };
      let done = false;
      sock.on('connect', write);
      sock.on('error', reject);
      // The server closing a connection before its requests are sent is a failure, not the end.
      sock.on('close', () => (done ? undefined : reject(new Error('the server closed a connection'))));
      sock.on('data', (chunk: Buffer) => {
        pending = Buffer.concat([pending, chunk]);
        for (;;) {
          const end = pending.indexOf('\r\n\r\n');
          if (end < 0) return;
          const head = pending.subarray(0, end).toString('latin1');
          const length = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? 0);
          if (pending.length < end + 4 + length) return;
          if (!/^HTTP\/1\.1 2\d\d /.test(head)) return reject(new Error(`answer: ${head.split('\r\n')[0]}`));
          pending = pending.subarray(end + 4 + length);
          write();
        }
      });
    });
  return Promise.all(Array.from({ length: CONNECTIONS }, one)).then(() => undefined);
}

function callgrindControl(args: string[]): void {
  const r = spawnSync('callgrind_control', args, { env: { ...process.env, HOST }, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`callgrind_control ${args.join(' ')} failed: ${r.stderr || r.stdout}`);
}

/** JIT code ranges from node's --perf-basic-prof map, sorted by address. */
function jitNames(pid: number): { start: number; end: number; name: string }[] {
  let text = '';
  try {
    text = readFileSync(`/tmp/perf-${pid}.map`, 'utf8');
    rmSync(`/tmp/perf-${pid}.map`, { force: true });
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [a, size, ...name] = line.split(' ');
      const start = parseInt(a, 16);
      // "JS:*decodePlainBody file:///…/dist/src/http/plain-body.js:93:32" → "JS:*decodePlainBody src/http/plain-body.js:93:32"
      return { start, end: start + parseInt(size, 16), name: name.join(' ').replace(/file:\/\/\/\S*\/dist\//, '') };
    })
    .sort((x, y) => x.start - y.start);
}

/** V8's garbage collector, by the names of its functions in callgrind's output (not the allocator's). */
export const GC_FUNCTION = /Scaveng|MarkCompact|Sweeper|GCTracer|heap::base::|v8::internal::Heap::|IncrementalMarking|ConcurrentMarking|MemoryAllocator|SemiSpace|NewSpace|PagedSpace|RememberedSet|SlotSet|EvacuationVerifier|MemoryChunk/;

/** The main thread's total, its collector's part and its costliest functions, per request, from callgrind's dump. */
function readDump(file: string, pid: number, requests: number): { total: number; gc: number; top: HttpCount['top'] } {
  const total = Number(/^summary: (\d+)/m.exec(readFileSync(file, 'utf8'))?.[1] ?? NaN);
  const annotated = spawnSync('callgrind_annotate', ['--threshold=100', file], { encoding: 'utf8', maxBuffer: 64 << 20 }).stdout;
  const jit = jitNames(pid);
  const byName = new Map<string, number>();
  for (const line of annotated.split('\n')) {
    const m = /^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)$/.exec(line);
    if (!m || m[2].startsWith('PROGRAM TOTALS')) continue;
    let name = m[2].trim();
    const address = /^\?\?\?:0x([0-9a-f]+) \[\?\?\?\]/.exec(name);
    if (address !== null) {
      const at = parseInt(address[1], 16);
      const hit = jit.find((j) => at >= j.start && at < j.end);
      if (hit !== undefined) name = hit.name;
    }
    // The object a native function is in by its file name alone ([uws_linux_x64_115.node]).
    name = name
      .replace(/^\?\?\?:/, '')
      .replace(/\(.*$/, '')
      .replace(/\[\/\S*\/([^/\]]+)\]/, '[$1]')
      .slice(0, 100);
    byName.set(name, (byName.get(name) ?? 0) + Number(m[1].replace(/,/g, '')));
  }
  const top = [...byName]
    .sort((a, b) => b[1] - a[1])
    .slice(0, TOP_FUNCTIONS)
    .map(([name, n]) => ({ name, perRequest: n / requests }));
  let gc = 0;
  for (const [name, n] of byName) if (GC_FUNCTION.test(name)) gc += n;
  return { total, gc, top };
}

/** Instructions per request of `script` answering `raw` under callgrind. */
async function count(target: string, script: string, env: Record<string, string>, reqs: readonly BenchRequest[]): Promise<HttpCount> {
  const port = await freePort();
  const out = mkdtempSync(join(tmpdir(), 'prbench-callgrind-'));
  const vg = spawn(
    'valgrind',
    ['--tool=callgrind', '--smc-check=all-non-file', '--separate-threads=yes', '--instr-atstart=no', `--callgrind-out-file=${out}/cg.%p`, process.execPath, '--perf-basic-prof', script],
    { env: { ...process.env, ...env, PORT: String(port), HOST, SERVICE_LOG_LEVEL: 'warn' }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  vg.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((resolve) => vg.once('exit', () => resolve()));
  try {
    await waitFor(`http://${HOST}:${port}/`, 600_000, vg);
    const raw = rawRequests(reqs, port);
    await send(port, raw, WARM_REQUESTS);
    callgrindControl(['--instr=on', String(vg.pid)]);
    await send(port, raw, SETTLE_REQUESTS);
    callgrindControl(['-z', String(vg.pid)]);
    await send(port, raw, MEASURED);
    callgrindControl(['-d', String(vg.pid)]);
  } catch (e) {
    throw new Error(`${target}: ${(e as Error).message}\n${stderr.slice(-2000)}`);
  } finally {
    vg.kill('SIGKILL');
    await exited;
  }
  // One file per thread and dump; the front thread is thread 1, its last dump the counted one.
  const mains = readdirSync(out)
    .filter((f) => /-01$/.test(f))
    .sort();
  if (mains.length === 0) throw new Error(`${target}: callgrind wrote no dump of the main thread\n${stderr.slice(-2000)}`);
  const { total, gc, top } = readDump(join(out, mains[mains.length - 1]), vg.pid!, MEASURED);
  rmSync(out, { recursive: true, force: true });
  return { target, perRequest: total / MEASURED, gcPerRequest: gc / MEASURED, top };
}

/** The counts for the service built in `dist` (route, outcome) and, once, for the bare ceiling. */
export async function countHttp(dists: readonly string[]): Promise<HttpCount[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'prbench-'));
  const { tenants, rules } = await seed(dataDir, { rules: RULES, tenants: 5 });
  const { route, outcome } = hotPathRequests(rules, 5);
  const bareBody = '{"processor_id":"p_0001_a","weight":1,"fallback_processor_id":"p_0001_b","decision_source":"rules","failure_probability":null,"rule_id":"rule-00001"}';
  const counts: HttpCount[] = [];
  try {
    counts.push(await count('bare uWS', join(dists[0], 'bench', 'bare-uws.js'), { BARE_BODY: bareBody }, route));
    for (const dist of dists) {
      const copy = callgrindCopy(dist);
      try {
        for (const [path, reqs] of [['route', route], ['outcome', outcome]] as const) {
          // Each run on its own copy of the seeded data: a run's outcomes must not reach the next.
          const data = mkdtempSync(join(tmpdir(), 'prbench-'));
          cpSync(dataDir, data, { recursive: true });
          try {
            const env = { SERVICE_DATA_DIR: data, SERVICE_API_KEYS: apiKeysFor(tenants), SERVICE_RATE_LIMIT_RPS: '0' };
            counts.push(await count(`${path} (${dist})`, join(copy, 'dist', 'src', 'main.js'), env, reqs));
          } finally {
            rmSync(data, { recursive: true, force: true });
          }
        }
      } finally {
        rmSync(copy, { recursive: true, force: true });
      }
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  return counts;
}
