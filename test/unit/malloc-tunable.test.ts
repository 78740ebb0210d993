/**
 * The malloc setting the service is deployed with (README, "Memory"): `npm start`, the Docker
 * image and the benchmarks' service processes must all carry the same one, or the benchmarks
 * measure a service nobody runs.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MALLOC_TUNABLE, withMallocTunable } from '../../bench/lib/processes.js';

const root = new URL('../../', import.meta.url);

describe('the malloc setting', () => {
  it('npm start runs the service with it, keeping a GLIBC_TUNABLES the caller set', () => {
    const start = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')).scripts.start as string;
    const command = start.slice(start.indexOf('GLIBC_TUNABLES='), start.indexOf(' node dist/src/main.js'));
    // npm runs scripts with sh: expand the assignment as it would, without and with a caller's value.
    const expand = (env: Record<string, string>) => execFileSync('sh', ['-c', `${command} sh -c 'printf %s "$GLIBC_TUNABLES"'`], { env: { PATH: process.env.PATH!, ...env }, encoding: 'utf8' });
    expect(expand({})).toBe(MALLOC_TUNABLE);
    expect(expand({ GLIBC_TUNABLES: 'glibc.malloc.arena_max=2' })).toBe(`glibc.malloc.arena_max=2:${MALLOC_TUNABLE}`);
    expect(withMallocTunable({})).toBe(MALLOC_TUNABLE);
    expect(withMallocTunable({ GLIBC_TUNABLES: 'glibc.malloc.arena_max=2' })).toBe(`glibc.malloc.arena_max=2:${MALLOC_TUNABLE}`);
    expect(withMallocTunable({ GLIBC_TUNABLES: '' })).toBe(''); // bench:memory --malloc-default
  });

  it('the Docker image sets the same', () => {
    const dockerfile = readFileSync(new URL('Dockerfile', root), 'utf8');
    expect(dockerfile).toMatch(new RegExp(`GLIBC_TUNABLES=${MALLOC_TUNABLE.replace(/\./g, '\\.')}\\b`));
  });
});
