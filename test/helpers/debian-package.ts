/**
 * Programs the tests drive that come from Debian's packages (Chromium, wrk): installed with
 * apt-get when missing, as .ci/run does (the test set-up and .ci/run run as root in CI), so a
 * test that needs one runs or fails; it never skips.
 */
import { spawnSync } from 'node:child_process';
import { hasCommand } from '../../bench/lib/wrk.js';

/** Makes `command` (a name on the PATH or an absolute path) available, installing Debian's `pkg` if needed; throws if it cannot. */
export function ensureDebianPackage(command: string, pkg: string): void {
  if (hasCommand(command)) return;
  const r = spawnSync('sh', ['-c', `apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ${pkg}`], { stdio: 'inherit', timeout: 600_000 });
  if (r.status !== 0 || !hasCommand(command)) throw new Error(`${command} is missing and apt-get install ${pkg} failed (run as root, or install it)`);
}
