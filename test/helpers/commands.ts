/** Whether a program is on the PATH (tests that drive wrk, taskset or bash skip, or fail under CI, without it). */
import { execFileSync } from 'node:child_process';

export function hasCommand(name: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${name}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
