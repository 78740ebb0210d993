/** Child processes for benchmarks: the service and the bare uWS ceiling, on free ports. */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { pinned } from './wrk.js';

export const DIST = fileURLToPath(new URL('../../', import.meta.url)); // dist/

/**
 * The malloc setting `npm start` and the Docker image run the service with (README, "Memory"):
 * blocks of 128 KiB or more are mapped on their own and returned to the system when freed.
 * glibc's default raises that threshold after each large free (up to 32 MB), and then keeps
 * freed blocks (postMessage buffers, big JSON answers, compressed scrapes) in its heap: at
 * 100,000 rules ~30 MB of RSS. The benchmarks run the service as it is deployed.
 */
export const MALLOC_TUNABLE = 'glibc.malloc.mmap_threshold=131072';

/**
 * GLIBC_TUNABLES with the service's malloc setting added to what `env` already holds; a value
 * set but empty is left empty (glibc's defaults: a benchmark of how builds were run before).
 */
export function withMallocTunable(env: NodeJS.ProcessEnv): string {
  if (env.GLIBC_TUNABLES === '') return '';
  return env.GLIBC_TUNABLES ? `${env.GLIBC_TUNABLES}:${MALLOC_TUNABLE}` : MALLOC_TUNABLE;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface Child {
  proc: ChildProcess;
  port: number;
  url: string;
  rssMb(): number;
  stop(): Promise<void>;
}

/**
 * Resolves once `url` answers an HTTP GET (any status), or throws after `timeoutMs`, or at
 * once when `proc` (the process that should answer) has exited: a service that fails at start
 * (its error is on stderr) would otherwise hold a benchmark for the whole timeout.
 */
export async function waitFor(url: string, timeoutMs: number, proc?: ChildProcess): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (proc !== undefined && (proc.exitCode !== null || proc.signalCode !== null)) {
      throw new Error(`${url}: the process exited (${proc.exitCode ?? proc.signalCode}) before it answered`);
    }
    try {
      await fetch(url, { method: 'GET' });
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms`);
}

export interface ChildOptions {
  /** taskset CPU list to pin the child to (e.g. "1"); ignored when taskset is missing. */
  cpus?: string;
  /** Extra node flags, e.g. ["--cpu-prof", "--cpu-prof-dir=..."]. */
  nodeArgs?: string[];
  /**
   * Start the child in a process group of its own, for a benchmark that stops it (SIGSTOP)
   * between its turns. In the benchmark's group, a stopped child gets SIGHUP, and with it the
   * whole group (the benchmark too), the moment that group loses its last link to the shell
   * that started it (POSIX's orphaned process group: a benchmark started in the background
   * from a shell that then exits). In a group of its own it does not see the terminal's
   * Ctrl-C either: the benchmark stops it (turn-taking.ts, stopChildrenOnSignals).
   */
  ownProcessGroup?: boolean;
}

export async function startChild(script: string, env: Record<string, string>, timeoutMs = 120_000, opts: ChildOptions = {}): Promise<Child> {
  const port = await freePort();
  // taskset execs node in place, so proc.pid is node's pid.
  const [cmd, ...args] = pinned(opts.cpus, [process.execPath, ...(opts.nodeArgs ?? []), script]);
  const proc = spawn(cmd, args, {
    env: { ...process.env, ...env, GLIBC_TUNABLES: withMallocTunable({ ...process.env, ...env }), PORT: String(port), HOST: '127.0.0.1', SERVICE_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
    detached: opts.ownProcessGroup ?? false,
  });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(url + '/', timeoutMs, proc);
  return {
    proc,
    port,
    url,
    rssMb() {
      const status = readFileSync(`/proc/${proc.pid}/status`, 'utf8');
      const m = /VmRSS:\s+(\d+) kB/.exec(status);
      return m ? Number(m[1]) / 1024 : NaN;
    },
    stop: () =>
      new Promise((resolve) => {
        if (proc.exitCode !== null) return resolve();
        proc.once('exit', () => resolve());
        proc.kill('SIGTERM');
      }),
  };
}
