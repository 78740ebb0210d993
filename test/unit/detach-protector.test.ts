/**
 * detachOneBuffer (src/detach-protector.ts) detaches a buffer once per thread, so that V8's
 * ArrayBufferDetaching protector is invalidated before anything is optimised (seen through
 * V8's own trace of protector invalidations, in a child process), and only once.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const MODULE = fileURLToPath(new URL('../../dist/src/detach-protector.js', import.meta.url));

function trace(script: string): string {
  return execFileSync(process.execPath, ['--trace-protector-invalidation', '--input-type=module', '-e', script], { encoding: 'utf8' });
}

describe('detachOneBuffer', () => {
  it("invalidates V8's detaching protector, once however often it is called", () => {
    const out = trace(`import { detachOneBuffer } from ${JSON.stringify(MODULE)}; console.log('before'); detachOneBuffer(); detachOneBuffer(); console.log('after');`);
    const lines = out.trim().split('\n');
    expect(lines.filter((l) => l.includes('ArrayBufferDetaching'))).toHaveLength(1);
    expect(lines.indexOf('before')).toBeLessThan(lines.findIndex((l) => l.includes('ArrayBufferDetaching')));
  });

  it('without it, nothing in loading the module does', () => {
    const out = trace(`await import(${JSON.stringify(MODULE)}); console.log('loaded');`);
    expect(out).not.toContain('ArrayBufferDetaching');
  });
});
