/** Whether a program is on the PATH (tests that drive wrk or taskset skip without it, or fail under CI). */
import { execFileSync } from 'node:child_process';

export function hasCommand(name: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
