/**
 * Runs a command to completion without blocking the test process (spawnSync would stall
 * vitest's worker: a long one makes its RPC to the runner time out on a busy machine).
 */
import { spawn, type SpawnOptions } from 'node:child_process';

export interface RunResult {
  /** Exit code; null when killed (timeout) or when the command could not start. */
  status: number | null;
  stdout: string;
  stderr: string;
  /** Set when the command could not be started (e.g. not installed). */
  error?: Error;
}

export function run(command: string, args: readonly string[], opts: SpawnOptions & { timeoutMs?: number } = {}): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
    child.once('error', (error) => {
      clearTimeout(timer);
      resolve({ status: null, stdout, stderr, error });
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ status: code, stdout, stderr });
    });
  });
}
