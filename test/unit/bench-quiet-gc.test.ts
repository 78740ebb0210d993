/**
 * The wrk benchmarks' process restarts itself with V8's memory reducer off (bench/lib/quiet-gc.ts):
 * its garbage collection shares wrk's core and would show as the service's latency. Run on the
 * compiled module, as `npm run bench` does.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/server.js';

const QUIET_GC = join(REPO_ROOT, 'dist', 'bench', 'lib', 'quiet-gc.js');
const PRINT = `await import(${JSON.stringify(QUIET_GC)}); console.log(JSON.stringify({ execArgv: process.execArgv, argv: process.argv.slice(1) }));`;

describe('bench quiet-gc', () => {
  it('restarts a process started without --no-memory-reducer with it, keeping its flags and arguments', () => {
    const out = execFileSync(process.execPath, ['--max-old-space-size=200', '--input-type=module', '-e', PRINT, 'a', '--b'], { encoding: 'utf8' });
    const lines = out.trim().split('\n');
    expect(lines).toHaveLength(1); // the first process printed nothing: it exited with its child's status
    const seen = JSON.parse(lines[0]) as { execArgv: string[]; argv: string[] };
    expect(seen.execArgv).toContain('--no-memory-reducer');
    expect(seen.execArgv).toContain('--max-old-space-size=200');
    expect(seen.argv).toEqual(['a', '--b']);
  });

  it('does not restart a process that already has it', () => {
    const out = execFileSync(process.execPath, ['--no-memory-reducer', '--input-type=module', '-e', PRINT], { encoding: 'utf8' });
    expect(JSON.parse(out.trim()).execArgv).toEqual(['--no-memory-reducer', '--input-type=module', '-e', PRINT]);
  });
});
