/**
 * Tools that explain themselves: every `npm run` script answers `--help` with its usage and
 * exits 0 (none starts a load run or prints a stack trace), a bad option is one line and exit
 * 2; the simulator and the scenario benchmark write an SVG chart with the failover marked.
 * Scripts run as `npm run X -- --help` would run them, minus the `npm run build &&` prefix
 * (the suite builds once before it starts).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { run } from '../helpers/run.js';
import { REPO_ROOT, startServer, stopAllServers } from '../helpers/server.js';

const scripts = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
const BUILD = 'npm run build';
const env = { ...process.env, PATH: `${join(REPO_ROOT, 'node_modules', '.bin')}:${process.env.PATH}`, NO_COLOR: '1' };
const tmp = mkdtempSync(join(tmpdir(), 'scripts-help-'));
afterAll(async () => {
  await stopAllServers();
  rmSync(tmp, { recursive: true, force: true });
});

/** The command `npm run <name> -- ARGS` ends up running, without the build step. */
function commandOf(name: string): string {
  let cmd = scripts[name];
  if (cmd === BUILD) cmd = scripts.build;
  if (cmd.startsWith(`${BUILD} && `)) cmd = cmd.slice(BUILD.length + 4);
  return cmd;
}

/** The bench and tool scripts of this repository (the others are tsc and vitest). */
const ownScript = (name: string) => commandOf(name).startsWith('node dist/bench/');

const sh = (cmd: string, timeoutMs = 60_000) => run('sh', ['-c', cmd], { cwd: REPO_ROOT, env, timeoutMs });

describe('npm run <script> -- --help', () => {
  // Side by side (vitest runs up to five at once): each is a process of its own that only prints.
  for (const name of Object.keys(scripts)) {
    it.concurrent(`${name} prints its usage and exits 0`, async ({ expect }) => {
      const r = await sh(`${commandOf(name)} --help`);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout.length, name).toBeGreaterThan(100);
      expect(r.stdout).toMatch(/usage|COMMANDS/i);
      expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
      if (ownScript(name)) {
        expect(r.stdout).toContain('Usage: npm run');
        expect(r.stdout).toContain('-h, --help');
      }
    });
  }

  it('npm start -- --help lists every environment variable the service reads', async () => {
    const help = (await sh(`node dist/src/main.js --help`)).stdout;
    const sources = ['src/config.ts', 'src/main.ts', 'src/service.ts'].map((f) => readFileSync(join(REPO_ROOT, f), 'utf8')).join('\n');
    const read = new Set(sources.match(/\bSERVICE_[A-Z_]+\b/g));
    expect(read.size).toBeGreaterThan(10);
    for (const v of [...read, 'PORT', 'HOST']) expect(help, v).toContain(v);
  });

  it('bench:compare needs the other build: without it, or with a path that is not there, exit 2 before any load run', async () => {
    const none = await sh(commandOf('bench:compare'));
    expect(none.status).toBe(2);
    expect(none.stderr).toContain('Usage: npm run bench:compare -- <');
    const missing = await sh(`${commandOf('bench:compare')} ${join(tmp, 'no-such-build', 'main.js')}`);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain('no-such-build/main.js: no such file');
    expect(missing.stderr).not.toMatch(/\n\s+at /);
  });

  it('our own scripts reject an unknown option in one line with exit 2', async () => {
    const own = Object.keys(scripts).filter(ownScript);
    expect(own.length).toBeGreaterThanOrEqual(6);
    for (const name of own) {
      const bad = await sh(`${commandOf(name)} --no-such-option`);
      expect(bad.status, name).toBe(2);
      expect(bad.stderr.trim().split('\n').length, name).toBeLessThanOrEqual(2);
    }
  });
});

describe('charts', () => {
  it('the scenario benchmark writes an SVG per scenario with the failover and the recovery marked', async () => {
    const r = await sh(`${commandOf('bench:scenarios')} --scenarios recovery --seeds 1 --rates 20 --chart-rate 20`, 120_000);
    expect(r.status, r.stderr).toBe(0);
    const dir = /charts \(SVG\): (\S+)/.exec(r.stdout)![1];
    const svg = readFileSync(join(dir, readdirSync(dir).find((f) => f.startsWith('recovery-'))!), 'utf8');
    expect(svg).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    expect(svg).toContain('>failover<');
    expect(svg).toContain('>recovered<');
    expect(svg).toContain('traffic share of the primary');
    expect(svg).toContain('technical error rate');
    expect(svg).toContain('failure probability of the primary');
    rmSync(dir, { recursive: true, force: true });
  });

  it('the simulator, against a running server, prints progress and writes an SVG with the failover marked', async () => {
    const s = await startServer({ env: { SERVICE_EVAL_INTERVAL_MS: '200' } });
    const chart = join(tmp, 'sim.svg');
    const r = await sh(
      `${commandOf('simulate')} --url ${s.baseUrl} --scenario sudden-outage --rate 40 --speed 10 --duration-s 60 --incident-at-s 20 --chart ${chart}`,
      60_000,
    );
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.split('\n').filter((l) => /^\s+\d+s\s/.test(l)).length).toBeGreaterThanOrEqual(4);
    expect(r.stdout).toContain(`chart: ${chart}`);
    const svg = readFileSync(chart, 'utf8');
    expect(svg).toContain('>failover<');
    expect(svg).toContain('>incident<');
  });
});
