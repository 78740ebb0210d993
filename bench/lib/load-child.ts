/**
 * autocannon in a child process: a load generator with its own thread, so two generators (or
 * a generator and the bench's own work) do not share one event loop. Used by bench/overload.ts
 * and bench/soak.ts.
 *
 *   const r = await runLoad({ url, connections: 100, durationS: 10, requests, overallRate: 4000 });
 *
 * Run directly (`node dist/bench/lib/load-child.js <spec.json>`) it prints the summary as JSON.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

export interface LoadRequest {
  method: string;
  path: string;
  body?: string;
  headers?: Record<string, string>;
}

export interface LoadSpec {
  url: string;
  connections: number;
  durationS: number;
  requests: LoadRequest[];
  /** Requests per second across all connections (open-loop pacing); unset = as fast as possible. */
  overallRate?: number;
  /** Per-request timeout, seconds (autocannon default 10). */
  timeoutS?: number;
}

export interface LoadSummary {
  /** Responses received (any status). */
  responses: number;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
}

const SELF = fileURLToPath(import.meta.url);

export function runLoad(spec: LoadSpec): Promise<LoadSummary> {
  const dir = mkdtempSync(join(tmpdir(), 'load-'));
  const file = join(dir, 'spec.json');
  writeFileSync(file, JSON.stringify(spec));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SELF, file], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout!.on('data', (c) => (out += c));
    child.once('error', reject);
    child.once('exit', (code) => {
      rmSync(dir, { recursive: true, force: true });
      if (code !== 0) return reject(new Error(`load generator exited with ${code}`));
      try {
        resolve(JSON.parse(out) as LoadSummary);
      } catch (e) {
        reject(e);
      }
    });
  });
}

interface AutocannonResultExtra {
  latency: { p50: number; p90: number; p99: number; p99_9: number; max: number };
  requests: { average: number; total: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodeStats?: Record<string, { count: number }>;
}

async function main(file: string): Promise<void> {
  const spec = JSON.parse(readFileSync(file, 'utf8')) as LoadSpec;
  const opts = {
    url: spec.url,
    connections: spec.connections,
    duration: spec.durationS,
    overallRate: spec.overallRate,
    timeout: spec.timeoutS ?? 10,
    requests: spec.requests.map((q) => ({ ...q, headers: { 'content-type': 'application/json', ...q.headers } })),
  };
  const r = (await autocannon(opts as unknown as Parameters<typeof autocannon>[0])) as unknown as AutocannonResultExtra;
  const statusCodes: Record<string, number> = {};
  for (const [k, v] of Object.entries(r.statusCodeStats ?? {})) statusCodes[k] = v.count;
  const summary: LoadSummary = {
    responses: r.requests.total,
    rps: r.requests.average,
    p50: r.latency.p50,
    p90: r.latency.p90,
    p99: r.latency.p99,
    p999: r.latency.p99_9,
    max: r.latency.max,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    statusCodes,
  };
  process.stdout.write(JSON.stringify(summary));
}

if (process.argv[1] === SELF) {
  main(process.argv[2]).catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
