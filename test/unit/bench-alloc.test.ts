/**
 * `npm run bench:alloc`'s parts: the breakdown of a heap profile by allocation site, and the
 * preloaded sampler, run in a real child process (started and stopped by its signals) that
 * allocates in a function of known name: that function must carry the allocations.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { allocationsBySite, siteOf, type HeapProfileNode } from '../../bench/lib/alloc-breakdown.js';
import { REPO_ROOT } from '../helpers/server.js';

const frame = (functionName: string, url = '', lineNumber = 0) => ({ functionName, url, lineNumber });
const node = (f: ReturnType<typeof frame>, selfSize: number, children: HeapProfileNode[] = []): HeapProfileNode => ({ callFrame: f, selfSize, children });

describe('allocationsBySite', () => {
  it('sums a site over every call path and divides by the requests', () => {
    const decode = frame('decode', 'file:///srv/dist/src/http/plain-body.js', 92);
    const head = node(frame('(root)'), 0, [
      node(frame('serve', 'file:///srv/dist/src/http/router.js', 117), 400, [node(decode, 300)]),
      node(frame('other', 'file:///srv/dist/src/http/router.js', 9), 0, [node(decode, 150)]),
      node(frame('(V8 API)'), 200),
    ]);
    const { total, rows } = allocationsBySite(head, 100);
    expect(total).toBe(10.5);
    expect(rows).toEqual([
      { site: 'decode http/plain-body.js:93', bytesPerRequest: 4.5 },
      { site: 'serve http/router.js:118', bytesPerRequest: 4 },
      { site: '(V8 API)', bytesPerRequest: 2 },
    ]);
  });

  it('names an anonymous function by its file and line', () => {
    expect(siteOf(frame('', 'file:///a/b/c.js', 4))).toBe('(anonymous) b/c.js:5');
  });
});

describe('heap sampler (preloaded)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'alloc-test-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('counts garbage that was collected, charged to the function that allocated it', async () => {
    const out = join(dir, 'heap.json');
    const script = join(dir, 'garbage.mjs');
    // Allocates ~40 MB of short-lived arrays in allocateGarbage after the sampler starts:
    // far more than the young generation, so nearly all of it is collected before the stop.
    writeFileSync(
      script,
      `function allocateGarbage() { let keep = 0; for (let i = 0; i < 200000; i++) keep += new Array(16).fill(i).length; return keep; }
       process.stdout.write('ready\\n');
       setTimeout(() => { allocateGarbage(); process.stdout.write('done\\n'); }, 300);
       setTimeout(() => {}, 10000);`,
    );
    const child = spawn(process.execPath, ['--import', join(REPO_ROOT, 'dist', 'bench', 'lib', 'heap-sampler.js'), script], {
      env: { ...process.env, BENCH_HEAP_PROFILE_OUT: out },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let seen = '';
    const saw = (s: string) => new Promise<void>((resolve) => {
      const check = () => (seen.includes(s) ? resolve() : undefined);
      child.stdout.on('data', (d: Buffer) => { seen += d.toString(); check(); });
      check();
    });
    try {
      await saw('ready');
      child.kill('SIGUSR2');
      await saw('done');
      child.kill('SIGWINCH');
      for (let i = 0; i < 100 && !existsSync(out); i++) await new Promise((r) => setTimeout(r, 50));
      await new Promise((r) => setTimeout(r, 100));
      const profile = JSON.parse(readFileSync(out, 'utf8')) as { head: HeapProfileNode };
      const { total, rows } = allocationsBySite(profile.head, 200_000);
      const mine = rows.find((r) => r.site.startsWith('allocateGarbage '));
      expect(mine).toBeDefined();
      // 16 elements of 4 or 8 bytes, plus headers: ~100-200 bytes per array, freed long before the stop.
      expect(mine!.bytesPerRequest).toBeGreaterThan(60);
      expect(mine!.bytesPerRequest / total).toBeGreaterThan(0.8);
    } finally {
      child.kill('SIGKILL');
    }
  }, 20_000);
});
