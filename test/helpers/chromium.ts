/**
 * Debian's Chromium for the browser tests, driven by playwright-core (no browser download).
 * Installed with apt-get when missing (the test set-up and .ci/run run as root in CI).
 */
import { chromium, type Browser } from 'playwright-core';
import { ensureDebianPackage } from './debian-package.js';

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

export async function launchChromium(): Promise<Browser> {
  ensureDebianPackage(CHROMIUM, 'chromium');
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
}
