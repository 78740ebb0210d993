/**
 * `npm run bench:stop -- [--rounds 200] [--parallel 2] [--main dist/src/main.js]`: starts the
 * service and stops it with SIGTERM the moment it first answers `GET /`, over and over, and
 * counts how each process ended. Every end should be exit code 0; a stop that lands while the
 * evaluation pool's thread is still loading used to abort the process (SIGABRT) now and then
 * on a loaded machine (README, Reliability: "Stop at any moment"). Run it with the machine
 * busy (that is when a thread is still loading), e.g. beside `stress` or the test suite. Each
 * process listens on a port of its own choosing (PORT=0, read from its "service started" log
 * line), so no other process can answer for it. Prints the tally, the stop durations and the
 * last output of every process that did not exit 0.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseCli } from './lib/cli.js';
import { DIST } from './lib/processes.js';

const o = parseCli({
  usage: 'npm run bench:stop -- [options]',
  summary: 'Starts the service and SIGTERMs it as soon as it answers, --rounds times over --parallel drivers; prints how the processes ended (exit code or signal) and the stop durations.',
  options: {
    rounds: { type: 'string', default: '200' },
    parallel: { type: 'string', default: '2' },
    main: { type: 'string', default: join(DIST, 'src', 'main.js') },
  },
  help: { rounds: 'start/stop cycles per driver', parallel: 'drivers running at once', main: 'the service entry to run (another build to compare)' },
});

interface End {
  end: string;
  stopMs: number;
  output: string;
}

async function cycle(main: string): Promise<End> {
  const dataDir = mkdtempSync(join(tmpdir(), 'stop-cycles-'));
  try {
    const proc = spawn(process.execPath, [main], {
      env: { PATH: process.env.PATH ?? '', PORT: '0', HOST: '127.0.0.1', SERVICE_DATA_DIR: dataDir, SERVICE_LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const exited = new Promise<string>((r) => proc.once('exit', (code, signal) => r(signal ?? `exit ${code}`)));
    const port = await new Promise<number | null>((r) => {
      const onData = (chunk: Buffer) => {
        output += chunk;
        const m = /"msg":"service started".*?"port":(\d+)/.exec(output);
        if (m) r(Number(m[1]));
      };
      proc.stdout!.on('data', onData);
      proc.stderr!.on('data', (c: Buffer) => (output += c));
      void exited.then(() => r(null));
    });
    if (port !== null) {
      try {
        await (await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(30_000) })).arrayBuffer();
      } catch {
        /* counted by how the process ends */
      }
      proc.kill('SIGTERM');
    }
    const t0 = performance.now();
    const end = await exited;
    return { end: port === null ? `${end} before answering` : end, stopMs: performance.now() - t0, output };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const main = resolve(o.main);
const rounds = Number(o.rounds);
const ends: End[] = [];
const load0 = loadavg()[0];
await Promise.all(
  Array.from({ length: Number(o.parallel) }, async () => {
    for (let i = 0; i < rounds; i++) ends.push(await cycle(main));
  }),
);
const tally = new Map<string, number>();
for (const e of ends) tally.set(e.end, (tally.get(e.end) ?? 0) + 1);
const ms = ends.map((e) => e.stopMs).sort((a, b) => a - b);
const at = (p: number) => ms[Math.min(ms.length - 1, Math.floor(p * ms.length))].toFixed(0);
console.log(`${ends.length} stops of ${main} (load average ${load0.toFixed(1)} at start, ${loadavg()[0].toFixed(1)} at end)`);
for (const [end, n] of [...tally].sort((a, b) => b[1] - a[1])) console.log(`  ${end}: ${n}`);
console.log(`stop duration: median ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${at(1)} ms`);
for (const e of ends.filter((x) => x.end !== 'exit 0')) console.log(`--- ${e.end} after ${e.stopMs.toFixed(0)} ms; last output:\n${e.output.slice(-1500)}`);
