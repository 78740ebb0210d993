#!/usr/bin/env node
/**
 * Compiles the TypeScript sources into dist/ without ever exposing a half-written dist/:
 * tsc writes into a fresh temporary directory, which then replaces dist/ by rename. Builds
 * of one checkout are serialised by a lock file, so two `npm start` (or `npm ci` and a
 * start) at once never load a build in progress.
 *
 *   node scripts/build.mjs              build now (npm run build)
 *   node scripts/build.mjs --if-stale   build only when a source is newer than dist/ (npm ci's
 *                                       `prepare`, `npm start`, `npm test`); without TypeScript
 *                                       installed (npm ci --omit=dev) an existing build is used
 *
 * Plain JavaScript on purpose: it must run where the TypeScript compiler is absent.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = join(ROOT, 'dist');
const STAMP = join(DIST, '.build-stamp');
const LOCK = join(ROOT, '.build.lock');
const INPUTS = ['src', 'bench', 'tsconfig.json'];
const ifStale = process.argv.includes('--if-stale');

const say = (msg) => process.stderr.write(`build: ${msg}\n`);

/** Newest modification time (ms) of any file under the inputs; 0 when there are none. */
function newestInput() {
  let newest = 0;
  const walk = (p) => {
    let st;
    try {
      st = statSync(p);
    } catch {
      return;
    }
    if (st.isDirectory()) {
      if (p.endsWith(`${join('bench', 'results')}`)) return; // benchmark output, not a source
      for (const name of readdirSync(p)) walk(join(p, name));
    } else if (st.mtimeMs > newest) newest = st.mtimeMs;
  };
  for (const i of INPUTS) walk(join(ROOT, i));
  return newest;
}

function builtAt() {
  try {
    return statSync(STAMP).mtimeMs;
  } catch {
    return -1;
  }
}

function current() {
  return existsSync(join(DIST, 'src', 'main.js')) && builtAt() >= newestInput();
}

function tscPath() {
  try {
    return createRequire(join(ROOT, 'package.json')).resolve('typescript/bin/tsc');
  } catch {
    return null;
  }
}

function pidAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === 'EPERM';
  }
}

/** Waits for the checkout's build lock (a file holding the builder's pid; a dead holder's lock is taken over). */
function lock() {
  const deadline = Date.now() + 300_000;
  for (;;) {
    try {
      const fd = openSync(LOCK, 'wx');
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      return;
    } catch (e) {
      if (e.code !== 'EEXIST') throw e;
    }
    let holder = NaN;
    try {
      holder = Number(readFileSync(LOCK, 'utf8'));
    } catch {
      continue; // released meanwhile
    }
    if (Number.isInteger(holder) && holder > 0 && !pidAlive(holder)) {
      try {
        unlinkSync(LOCK); // its builder died; its temporary directory is removed below
      } catch {
        /* someone else took it over */
      }
      continue;
    }
    if (Date.now() > deadline) throw new Error(`${LOCK} is held by pid ${holder} for more than 5 minutes`);
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
  }
}

function unlock() {
  try {
    if (readFileSync(LOCK, 'utf8') === String(process.pid)) unlinkSync(LOCK);
  } catch {
    /* already gone */
  }
}

function build(tsc) {
  const started = Date.now();
  const tmp = join(ROOT, `.dist-building-${process.pid}`);
  const old = join(ROOT, `.dist-old-${process.pid}`);
  rmSync(tmp, { recursive: true, force: true });
  const r = spawnSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.json'), '--outDir', tmp], { cwd: ROOT, stdio: 'inherit' });
  if (r.status !== 0) {
    rmSync(tmp, { recursive: true, force: true });
    say('tsc failed; dist/ left as it was');
    process.exit(r.status ?? 1);
  }
  mkdirSync(tmp, { recursive: true });
  // The stamp's time is when compilation started: a source edited during the build makes it stale.
  writeFileSync(join(tmp, '.build-stamp'), '');
  utimesSync(join(tmp, '.build-stamp'), started / 1000, started / 1000);
  if (existsSync(DIST)) renameSync(DIST, old);
  renameSync(tmp, DIST);
  rmSync(old, { recursive: true, force: true });
  say(`compiled into dist/ in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

const USAGE = `Usage: npm run build   (node scripts/build.mjs [--if-stale])

Compiles src/ and bench/ with TypeScript into dist/, atomically (a temporary
directory renamed into place) and one build at a time per checkout (a lock file).

Options:
  --if-stale   build only when a source is newer than dist/ (used by npm ci's prepare,
               npm start and npm test); without TypeScript installed, use the existing dist/
  -h, --help   show this help and exit`;

function main() {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (!existsSync(join(ROOT, 'src'))) {
    say('no sources here (dependency-only install): nothing to build');
    return;
  }
  if (ifStale && current()) return;
  const tsc = tscPath();
  if (tsc === null) {
    if (existsSync(join(DIST, 'src', 'main.js'))) {
      if (ifStale) say('TypeScript is not installed (production install): using the existing dist/');
      else {
        say('TypeScript is not installed: run npm ci (with dev dependencies) to build');
        process.exit(1);
      }
      return;
    }
    say('TypeScript is not installed and there is no dist/: install with dev dependencies (npm ci) to build');
    process.exit(1);
  }
  lock();
  try {
    // Another build may have finished while this one waited for the lock.
    if (ifStale && current()) return;
    // Leftovers of builders that died (their pids are not running).
    for (const name of readdirSync(ROOT)) {
      const m = /^\.dist-(?:building|old)-(\d+)$/.exec(name);
      if (m && Number(m[1]) !== process.pid && !pidAlive(Number(m[1]))) rmSync(join(ROOT, name), { recursive: true, force: true });
    }
    build(tsc);
  } finally {
    unlock();
  }
}

main();
