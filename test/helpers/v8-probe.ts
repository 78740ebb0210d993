/**
 * Runs a probe in a child Node process and returns the JSON object its last line prints.
 * For tests that ask V8 whether code stays optimised: natives syntax (%GetOptimizationStatus,
 * %HaveSameMap...) has to be switched on before the probe is compiled, which only a process
 * of its own allows. The probe is an ES module; it loads the built modules (npm test builds
 * first) by the paths `builtModule` gives.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from './server.js';

/** The path of a built module of src/, as a string literal to paste into a probe. */
export const builtModule = (...path: string[]): string => JSON.stringify(join(REPO_ROOT, 'dist', 'src', ...path));

export function runV8Probe<T>(source: string, nodeFlags: readonly string[] = []): T {
  const r = spawnSync(process.execPath, [...nodeFlags, '--input-type=module', '-e', source], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 60_000 });
  const line = r.stdout.trim().split('\n').pop() ?? '';
  if (!line.startsWith('{')) throw new Error(`probe failed (exit ${r.status}): ${r.stderr}`);
  return JSON.parse(line) as T;
}

/** runV8Probe for a probe that needs a directory of its own (a store): made fresh, removed after. */
export function runV8ProbeInDir<T>(source: (dir: string) => string, nodeFlags: readonly string[] = []): T {
  const dir = mkdtempSync(join(tmpdir(), 'v8-probe-'));
  try {
    return runV8Probe<T>(source(dir), nodeFlags);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
