/**
 * The evaluation pool's threads run at a lower scheduling priority than the front thread
 * (src/engine/worker/priority.ts), so that on a busy core routes win it: checked on the real
 * server through /proc (Linux), thread by thread.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { availableParallelism, getPriority } from 'node:os';
import { afterAll, describe, expect, it } from 'vitest';
import { POOL_THREAD_NICE_INCREMENT, ROUTINE_THREAD_NICE_INCREMENT } from '../../src/engine/worker/priority.js';
import { startServer, stopAllServers } from '../helpers/server.js';
import { until } from '../helpers/until.js';
import { DEFAULT_METRICS_RENDER_NICE } from '../../src/config.js';

afterAll(stopAllServers);

/** Nice value of every thread of `pid`, by thread id (field 19 of /proc/<pid>/task/<tid>/stat). */
function threadNice(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields from 3 on
    out.set(Number(tid), Number(fields[19 - 3]));
  }
  return out;
}

const base = getPriority(0); // the server inherits this process's nice value
const onLinux = process.platform === 'linux' && base + 1 <= 19;

describe.skipIf(!onLinux)('pool thread priority', () => {
  it('lowers the pool threads (the cycle\'s below the early evaluations\') and the metrics render thread only: the front thread and the other threads keep the process priority', async () => {
    const s = await startServer({ jitWarmUp: true });
    // The pool has answered a task. Waited for, not asked once: on a busy machine the JIT
    // warm-up keeps the pool's threads busy for a while after start, and /ready rightly answers
    // 503 until a ping gets through within its timeout (seen once in a fresh-clone CI run).
    await until('GET /ready answers 200', async () => (await s.request('GET', '/ready')).status === 200 || null, 30_000);
    // The render thread starts with the service when the JIT warm-up runs (SERVICE_JIT_WARM_UP: the service's default, off in the test helper unless asked).
    await until('the render thread', () => s.output().includes('metrics render thread started'), 20_000);
    const pid = s.proc.pid!;
    const nice = threadNice(pid);
    expect(nice.get(pid)).toBe(base); // the front thread (its id is the process id)
    const lowered = [...nice].filter(([, n]) => n !== base).map(([, n]) => n);
    const poolThreads = Math.max(1, availableParallelism() - 1); // of each set: early evaluations, cycle
    const early = Math.min(19, base + POOL_THREAD_NICE_INCREMENT);
    const routine = Math.min(19, base + ROUTINE_THREAD_NICE_INCREMENT);
    const render = Math.min(19, base + DEFAULT_METRICS_RENDER_NICE);
    expect(lowered.sort()).toEqual([...Array<number>(poolThreads).fill(early), ...Array<number>(poolThreads).fill(routine), render].sort());
  });
});
