/**
 * Load generation with wrk (C, one thread): one Node process running autocannon saturates
 * around 60-67,000 req/s here, below what bare uWS answers, so a benchmark driven by it
 * measures the generator. wrk runs pinned to its own core (taskset) with a Lua script that
 * cycles through the given requests and prints its summary as one JSON line; its own CPU is
 * read from the wrapping shell's reaped-children time, so a saturated generator shows.
 *
 * Install: `apt-get install -y wrk` (Debian/Ubuntu), `brew install wrk` (macOS).
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseQuantiles, QUANTILE_GRID, type LatencyQuantiles } from './latency-quantiles.js';

export interface WrkRequest {
  method: string;
  path: string;
  body: string;
  headers: Record<string, string>;
}

export interface WrkResult {
  requests: number;
  durationS: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** The run's latency percentiles (latency-quantiles.ts): for percentiles over several runs. */
  latency: LatencyQuantiles;
  /** Answers with a status ≥ 400 (wrk counts them as errors.status). */
  non2xx: number;
  /** Connect, read, write errors and timeouts. */
  errors: number;
  /** CPU seconds wrk used, and the share of its core over the run. */
  generatorCpuS: number;
  generatorCore: number;
  /**
   * Seconds wrk's load thread spent runnable but not running (preempted, or woken and waiting
   * for its core), from the kernel's /proc/thread-self/schedstat; NaN where it cannot be read.
   * A generator held off its core does not read the answers waiting for it, and counts that
   * wait into their latency: for bare and the service alike, and for every request in flight.
   */
  generatorWaitS: number;
  /** pid of the shell that wraps wrk (exclude it from "other processes"). */
  wrapperPid: number;
}

/** Whether a program is on the PATH (the benchmarks and the tests that drive wrk ask it). */
export function hasCommand(cmd: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export const HAVE_TASKSET = hasCommand('taskset');

export function requireWrk(): void {
  if (!hasCommand('wrk')) {
    throw new Error('wrk is not installed: `apt-get install -y wrk` (Debian/Ubuntu) or `brew install wrk` (macOS)');
  }
}

/** `cmd` prefixed with taskset pinning it to `cpus` (e.g. "1"), when taskset exists. */
export function pinned(cpus: string | undefined, cmd: string[]): string[] {
  return cpus !== undefined && HAVE_TASKSET ? ['taskset', '-c', cpus, ...cmd] : cmd;
}

/**
 * Pins every thread of this process to `cpus` (taskset -a), when taskset exists: the benchmark's
 * own process (its /metrics/ scrapes, result handling, GC) belongs with the load generator, not
 * on the server's core, where it would count as the service's own latency. Returns whether it did.
 */
export function pinSelf(cpus: string): boolean {
  if (!HAVE_TASKSET) return false;
  try {
    execFileSync('taskset', ['-a', '-c', '-p', cpus, String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const luaString = (s: string) => {
  let eq = '';
  while (s.includes(`]${eq}]`)) eq += '=';
  return `[${eq}[${s}]${eq}]`;
};

/** Requests per Lua function: a function holds at most 65,536 constants (each body is one). */
const LUA_CHUNK = 4096;

function script(requests: readonly WrkRequest[]): string {
  const entries = requests.map((q) => {
    const headers = Object.entries({ 'Content-Type': 'application/json', ...q.headers })
      .map(([k, v]) => `[ ${luaString(k)} ] = ${luaString(v)}`)
      .join(', ');
    return `  { ${luaString(q.method)}, ${luaString(q.path)}, { ${headers} }, ${luaString(q.body)} },`;
  });
  const chunks: string[] = [];
  for (let i = 0; i < entries.length; i += LUA_CHUNK) {
    chunks.push(`(function() return {\n${entries.slice(i, i + LUA_CHUNK).join('\n')}\n} end)`);
  }
  return `local grid = { ${QUANTILE_GRID.join(', ')} }
local raw = {}
for _, chunk in ipairs({ ${chunks.join(',\n')} }) do
  for _, q in ipairs(chunk()) do raw[#raw + 1] = q end
end
local reqs = {}
local i = 0
init = function(args)
  for j, q in ipairs(raw) do reqs[j] = wrk.format(q[1], q[2], q[3], q[4]) end
end
-- The load thread's time runnable but off its core (/proc/thread-self/schedstat's second
-- field, ns), read at its first request and then every WAIT_EVERY: the last reading is at most
-- a few ms before the run's end, and a read costs the thread a few µs per WAIT_EVERY requests.
-- wrk calls request() once from its main thread to check the script before the load thread
-- starts, so the second call reads too: a reading from another thread than the one before (its
-- id, /proc/thread-self/stat's first field) starts the count again, so first and last are the
-- load thread's.
local WAIT_EVERY = 1024
local calls = 0
wait_first = -1
wait_last = -1
local wait_tid = -1
local function read_first_number(path, pattern)
  local f = io.open(path, 'r')
  if not f then return -1 end
  local line = f:read('*l')
  f:close()
  local v = line and line:match(pattern)
  return v and tonumber(v) or -1
end
local function sample_wait()
  local tid = read_first_number('/proc/thread-self/stat', '^(%d+)')
  local delay = read_first_number('/proc/thread-self/schedstat', '^%d+ (%d+)')
  if tid ~= wait_tid then
    wait_tid = tid
    wait_first = delay
  end
  wait_last = delay
end
request = function()
  if calls % WAIT_EVERY == 0 or calls == 1 then sample_wait() end
  calls = calls + 1
  i = i + 1
  if i > #reqs then i = 1 end
  return reqs[i]
end
local threads = {}
setup = function(thread) threads[#threads + 1] = thread end
done = function(summary, latency, requests)
  local waited = 0
  for _, t in ipairs(threads) do
    local first, last = t:get('wait_first'), t:get('wait_last')
    if first < 0 or last < 0 then waited = -1 break end
    waited = waited + (last - first)
  end
  io.write(string.format('WRKWAIT %d\\n', waited))
  local e = summary.errors
  io.write(string.format('WRKJSON {"requests":%d,"duration_us":%d,"p50_us":%d,"p99_us":%d,"status":%d,"other_errors":%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), e.status,
    e.connect + e.read + e.write + e.timeout))
  -- the percentiles of QUANTILE_GRID (latency-quantiles.ts), for pooling runs' latencies
  local qs = {}
  for j, p in ipairs(grid) do
    -- wrk's percentile(100) looks for a rank past its last request and gives 0
    if p >= 100 then qs[j] = latency.max else qs[j] = latency:percentile(p) end
  end
  io.write('WRKQUANTILES ' .. table.concat(qs, ',') .. '\\n')
end
`;
}

export interface WrkOptions {
  url: string;
  requests: readonly WrkRequest[];
  durationS: number;
  connections: number;
  /** taskset CPU list for wrk, e.g. "0". */
  cpus?: string;
  /** Called with the wrapper's pid once it runs (for the disturbance accounting). */
  onStart?(wrapperPid: number): void;
}

export function runWrk(o: WrkOptions): Promise<WrkResult> {
  const dir = mkdtempSync(join(tmpdir(), 'prbench-wrk-'));
  const file = join(dir, 'requests.lua');
  writeFileSync(file, script(o.requests));
  const wrk = pinned(o.cpus, ['wrk', '-t1', `-c${o.connections}`, `-d${o.durationS}s`, '--timeout', '10s', '-s', file, o.url]);
  // The shell's own stat line, read after wrk has been reaped, holds wrk's CPU as cutime/cstime.
  const quoted = wrk.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const sh = spawn('sh', ['-c', `${quoted}; echo "SHSTAT $(cat /proc/$$/stat)"`], { stdio: ['ignore', 'pipe', 'pipe'] });
  o.onStart?.(sh.pid!);
  let out = '';
  let err = '';
  sh.stdout.on('data', (d: Buffer) => (out += d.toString()));
  sh.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve, reject) => {
    sh.on('exit', () => {
      rmSync(dir, { recursive: true, force: true });
      const json = /WRKJSON (\{.*\})/.exec(out);
      const stat = /SHSTAT (.*)/.exec(out);
      const quantiles = /WRKQUANTILES (.*)/.exec(out);
      const waited = /WRKWAIT (-?\d+)/.exec(out);
      // The quantile line is the hook's own: a run without it would pool as no requests at all.
      if (!json || !stat || !quantiles) return reject(new Error(`wrk failed: ${err || out}`));
      const w = JSON.parse(json[1]) as { requests: number; duration_us: number; p50_us: number; p99_us: number; status: number; other_errors: number };
      const f = stat[1].slice(stat[1].lastIndexOf(')') + 2).split(' ');
      const generatorCpuS = (Number(f[13]) + Number(f[14])) / 100; // cutime + cstime of the shell
      const durationS = w.duration_us / 1e6;
      resolve({
        requests: w.requests,
        durationS,
        rps: w.requests / durationS,
        p50Ms: w.p50_us / 1000,
        p99Ms: w.p99_us / 1000,
        latency: parseQuantiles(quantiles[1], w.requests),
        non2xx: w.status,
        errors: w.other_errors,
        generatorCpuS,
        generatorCore: generatorCpuS / durationS,
        generatorWaitS: waited === null || Number(waited[1]) < 0 ? NaN : Number(waited[1]) / 1e9,
        wrapperPid: sh.pid!,
      });
    });
  });
}
