/**
 * Debian's Chromium for the browser tests, driven by playwright-core (no browser download).
 * Installed with apt-get when missing (the test set-up and .ci/run run as root in CI).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export function ensureChromium(): void {
  if (existsSync(CHROMIUM)) return;
  const r = spawnSync('sh', ['-c', 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium'], { stdio: 'inherit', timeout: 600_000 });
  if (r.status !== 0 || !existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing and apt-get install chromium failed (run as root, or install it)`);
}

export async function launchChromium(): Promise<Browser> {
  ensureChromium();
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
}
