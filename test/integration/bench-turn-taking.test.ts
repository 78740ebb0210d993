/**
 * `npm run bench` measures one server at a time with the others stopped (bench/lib/turn-taking.ts):
 * real bare uWS servers, their state read from /proc. If a slice ran beside an idle service
 * again, the ceiling would lose its throughput to it and flatter every ratio.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { processState } from '../../bench/lib/cpu-usage.js';
import { startChild, type Child } from '../../bench/lib/processes.js';
import { TurnTaking } from '../../bench/lib/turn-taking.js';
import { REPO_ROOT } from '../helpers/server.js';

/** The process's state letter from /proc (T: stopped). */
const state = (c: Child): string | null => processState(c.proc.pid!);

async function answers(c: Child): Promise<boolean> {
  try {
    const r = await fetch(c.url + '/', { signal: AbortSignal.timeout(500) });
    await r.arrayBuffer();
    return true;
  } catch {
    return false;
  }
}

const children: Child[] = [];
const turns = new TurnTaking(200);
afterAll(async () => {
  turns.releaseAll();
  await Promise.all(children.map((c) => c.stop()));
});

describe('servers taking turns', () => {
  it('runs only the server measured, wakes it a settle time before its slice, and wakes every one before they are stopped', async () => {
    const bare = join(REPO_ROOT, 'dist/bench/bare-uws.js');
    const [a, b, c] = await Promise.all([0, 1, 2].map(() => startChild(bare, { BARE_BODY: '{}' }, 30_000)));
    children.push(a, b, c);
    const all = new Set(children);

    await turns.only(a, all);
    expect([state(b), state(c)]).toEqual(['T', 'T']);
    expect(state(a)).not.toBe('T');
    expect(await answers(a)).toBe(true);
    expect(await answers(b)).toBe(false); // stopped: the connection waits, unanswered

    const t0 = performance.now();
    await turns.only(b, all);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(195); // woken, then left to settle
    expect(state(a)).toBe('T');
    expect(state(b)).not.toBe('T');
    expect(await answers(b)).toBe(true);

    const t1 = performance.now();
    await turns.only(b, all); // already running: no settle again
    expect(performance.now() - t1).toBeLessThan(150);

    turns.release(c);
    expect(turns.isStopped(c)).toBe(false);
    expect(state(c)).not.toBe('T');
    turns.releaseAll();
    for (const x of children) expect(state(x)).not.toBe('T');
    expect(await answers(a)).toBe(true);
  });
});

/**
 * A benchmark started in the background from a shell that then exits (`npm run bench &`, nohup
 * aside) must outlive it. Its process group is orphaned the moment the shell exits, and POSIX
 * then sends SIGHUP to every process of a group with a stopped member: before the servers had
 * groups of their own, that killed the benchmark and its servers without a word (found when a
 * run died in its first minute). Here a script started in the background by a shell that is
 * a job of another (a process group of its own, in this session) stops one server; its shell
 * exits, and the script must still be there to wake the server and be answered.
 */
describe('a benchmark whose shell exits while a server is stopped', () => {
  it('survives, and so does the stopped server', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'turns-'));
    const lib = join(REPO_ROOT, 'dist/bench/lib');
    const script = join(dir, 'bench.mjs');
    writeFileSync(
      script,
      `import { startChild } from ${JSON.stringify(join(lib, 'processes.js'))};
import { TurnTaking } from ${JSON.stringify(join(lib, 'turn-taking.js'))};
import { writeFileSync } from 'node:fs';
const bare = ${JSON.stringify(join(REPO_ROOT, 'dist/bench/bare-uws.js'))};
const [a, b] = await Promise.all([0, 1].map(() => startChild(bare, { BARE_BODY: '{}' }, 30000, { ownProcessGroup: true })));
const turns = new TurnTaking(50);
await turns.only(a, [a, b]);
writeFileSync(${JSON.stringify(join(dir, 'stopped'))}, '');
await new Promise((r) => setTimeout(r, 2500)); // the shell has exited meanwhile
await turns.only(b, [a, b]);
const r = await fetch(b.url + '/');
await r.arrayBuffer();
writeFileSync(${JSON.stringify(join(dir, 'alive'))}, String(r.status));
turns.releaseAll();
await Promise.all([a.stop(), b.stop()]);
`,
    );
    // The inner shell (a job of the outer one: `set -m` gives it a process group of its own)
    // starts the script in the background, waits until a server is stopped and exits: the
    // script's group loses its last parent in this session with it.
    const inner = `node ${script} >/dev/null 2>&1 & while [ ! -e ${dir}/stopped ]; do sleep 0.05; done`;
    const sh = spawn('bash', ['-c', `set -m; bash -c '${inner}' & wait`], { stdio: 'ignore' });
    await new Promise((r) => sh.once('exit', r));
    const until = Date.now() + 15_000;
    while (!existsSync(join(dir, 'alive')) && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    const alive = existsSync(join(dir, 'alive'));
    rmSync(dir, { recursive: true, force: true });
    expect(alive).toBe(true);
  }, 30_000);
});
