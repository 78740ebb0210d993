/**
 * Redis for tests: the machine's server at 127.0.0.1:6379 (never stopped or reconfigured),
 * a key prefix per test run, and private `redis-server` processes on free ports for outage
 * tests. When the shared server cannot be reached the tests are skipped with the reason,
 * unless CI is set: then they fail.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { deleteClusterKeys } from '../../bench/lib/cluster-keys.js';
import { connectRedis, GuardedRedis } from '../../src/cluster/redis-client.js';
import { freePort } from './free-port.js';

export const SHARED_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

function probe(url: string): string | undefined {
  // Synchronous, so `describe.skipIf` can use the answer at collection time.
  const u = new URL(url);
  const r = spawnSync('redis-cli', ['-h', u.hostname, '-p', u.port || '6379', 'ping'], { encoding: 'utf8', timeout: 3000 });
  if (r.error) return `redis-cli could not run (${r.error.message})`;
  if (r.stdout.trim() !== 'PONG') return `Redis at ${url} did not answer PING (${(r.stdout + r.stderr).trim() || 'no answer'})`;
  return undefined;
}

const unreachable = probe(SHARED_REDIS_URL);
if (unreachable !== undefined) {
  if (process.env.CI) throw new Error(`Redis is required under CI: ${unreachable}`);
  console.warn(`Redis tests skipped: ${unreachable}`);
}
/** Why the Redis tests cannot run, or undefined when they can. */
export const redisUnavailable: string | undefined = unreachable;

/** A fresh cluster name (key prefix) for one test. */
export function testClusterName(label: string): string {
  return `t_${label}_${process.pid}_${randomBytes(4).toString('hex')}`;
}

/** Deletes every key of the cluster (the hash tag `{name}`). */
export const dropClusterKeys = deleteClusterKeys;

/** Resolves once `g` is connected (at once when it already is). */
export async function whenReady(g: GuardedRedis): Promise<void> {
  if (!g.connected()) await new Promise<void>((r) => g.redis.once('ready', () => r()));
}

/** A guarded connection to `url`, once ready; its close goes on the test's `cleanups` list. */
export async function readyConnection(
  url: string,
  name: string,
  commandTimeoutMs: number,
  cleanups: (() => Promise<void> | void)[],
): Promise<GuardedRedis> {
  const g = new GuardedRedis(connectRedis({ url, name, commandTimeoutMs }), name);
  cleanups.push(() => g.close());
  await whenReady(g);
  return g;
}

export interface PrivateRedis {
  url: string;
  port: number;
  proc: ChildProcess;
  /** Stops it (SIGKILL: an outage, not a shutdown) and resolves when it is gone. */
  stop(): Promise<void>;
  /** Starts it again on the same port (empty: no persistence). */
  restart(): Promise<void>;
}

const privates = new Set<ChildProcess>();
process.once('exit', () => {
  for (const p of privates) p.kill('SIGKILL');
});

async function waitPing(url: string, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (probe(url) === undefined) return;
    if (Date.now() > until) throw new Error(`private redis at ${url} did not start`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A private redis-server on a free port, no persistence: stop it freely for outage tests. */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  const launch = () => {
    const p = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    privates.add(p);
    p.once('exit', () => privates.delete(p));
    return p;
  };
  const pr: PrivateRedis = {
    url,
    port,
    proc: launch(),
    async stop() {
      const p = pr.proc;
      if (p.exitCode !== null || p.signalCode !== null) return;
      const gone = new Promise<void>((r) => p.once('exit', () => r()));
      p.kill('SIGKILL');
      await gone;
    },
    async restart() {
      await pr.stop();
      pr.proc = launch();
      await waitPing(url, 10_000);
    },
  };
  await waitPing(url, 10_000);
  return pr;
}
