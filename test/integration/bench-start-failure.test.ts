/**
 * A benchmark's server that fails at start (a missing model file, a data directory in use)
 * exits with its error on stderr; startChild must report that at once instead of waiting for
 * an answer until its timeout (minutes, for the service).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startChild } from '../../bench/lib/processes.js';

const dir = mkdtempSync(join(tmpdir(), 'bench-start-failure-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('bench startChild', () => {
  it('rejects as soon as the child exits before answering, not at its timeout', async () => {
    const script = join(dir, 'fails.mjs');
    writeFileSync(script, 'process.exit(3);\n');
    const t0 = Date.now();
    await expect(startChild(script, {}, 60_000)).rejects.toThrow(/exited \(3\) before it answered/);
    expect(Date.now() - t0).toBeLessThan(10_000);
  });

  it('still waits for a child that answers late', async () => {
    const script = join(dir, 'late.mjs');
    writeFileSync(
      script,
      "import { createServer } from 'node:http';\n" +
        "setTimeout(() => createServer((q, r) => r.end('ok')).listen(Number(process.env.PORT), '127.0.0.1'), 500);\n",
    );
    const child = await startChild(script, {}, 20_000);
    try {
      expect((await fetch(child.url + '/')).status).toBe(200);
    } finally {
      await child.stop();
    }
  });
});
