/**
 * The dashboard in a real browser (Debian's Chromium through playwright-core): load the page,
 * enter a key, see the rule; report failed outcomes and see the failover appear (status and
 * event); pin a processor behind the confirmation and see routing follow. Screenshots are
 * saved in test-artifacts/dashboard/.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../helpers/chromium.js';
import { REPO_ROOT, startServer, stopAllServers, type TestServer } from '../helpers/server.js';

const KEY = 'kdash-4c1e9a';
const H = { 'X-API-Key': KEY };
const SHOTS = join(REPO_ROOT, 'test-artifacts', 'dashboard');
let s: TestServer;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  s = await startServer({ env: { SERVICE_API_KEYS: `${KEY}:acme,kother:globex`, SERVICE_TIER: '1', SERVICE_RATE_LIMIT_RPS: '0', SERVICE_EVAL_INTERVAL_MS: '500' } });
  const rule = { rule_id: 'us_usd_card', attributes: ['US', 'USD', 'card'], primary_id: 'stripe', primary_name: 'Stripe', secondary_id: 'adyen', secondary_name: 'Adyen', primary_weight: 0.9 };
  expect((await s.request('POST', '/v1/rules', rule, H)).status).toBe(201);
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on('dialog', (d) => void d.accept()); // the operator confirms
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stopAllServers();
});

describe('dashboard', () => {
  it('serves its own assets (no CDN)', async () => {
    const html = await s.request('GET', '/dashboard');
    expect(html.status).toBe(200);
    expect(html.headers.get('content-type')).toContain('text/html');
    expect(html.text).not.toMatch(/https?:\/\//);
    expect((await s.request('GET', '/dashboard/dashboard.js')).status).toBe(200);
    expect((await s.request('GET', '/dashboard/dashboard.css')).status).toBe(200);
    expect((await s.request('GET', '/dashboard/..%2Fpackage.json')).status).toBe(404);
  });

  it('shows a failover after failed outcomes, then a pin that routing follows', async () => {
    const external: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(s.baseUrl)) external.push(r.url());
    });
    await page.goto(`${s.baseUrl}/dashboard`);
    await page.fill('#api-key', KEY);
    await page.click('#connect-button');
    const card = page.locator('.rule[data-rule="us_usd_card"]');
    await card.waitFor({ timeout: 10_000 });
    await expect.poll(() => card.locator('tr[data-processor="stripe"] .status').textContent()).toBe('healthy');
    await page.screenshot({ path: join(SHOTS, '1-connected.png'), fullPage: true });

    for (let i = 0; i < 40; i++) {
      await s.request('POST', '/v1/outcome', { rule_id: 'us_usd_card', processor_id: 'adyen', success: true, latency_ms: 120 }, H);
    }
    for (let i = 0; i < 15; i++) {
      await s.request('POST', '/v1/outcome', { rule_id: 'us_usd_card', processor_id: 'stripe', success: false, latency_ms: 3000, error_code: 'processor_unavailable' }, H);
    }
    await expect.poll(() => card.locator('tr[data-processor="stripe"] .status').textContent(), { timeout: 15_000 }).toBe('failed_over');
    await expect.poll(() => page.locator('#events li[data-rule="us_usd_card"]').count(), { timeout: 10_000 }).toBeGreaterThan(0);
    expect(await page.locator('#events').textContent()).toContain('stripe → adyen');
    await page.screenshot({ path: join(SHOTS, '2-failover.png'), fullPage: true });
    expect((await s.request('POST', '/v1/route', { country: 'US', currency: 'USD' }, H)).json.processor_id).toBe('adyen');

    // Pin the primary back through the dashboard (confirmed in the dialog): routing follows.
    await card.locator('button[data-action="pin"][data-processor="stripe"]').click();
    await card.locator('.override[data-override="pin"]').waitFor({ timeout: 10_000 });
    for (let i = 0; i < 10; i++) {
      const r = await s.request('POST', '/v1/route', { country: 'US', currency: 'USD' }, H);
      expect(r.json).toMatchObject({ processor_id: 'stripe', decision_source: 'rules', weight: 1 });
    }
    await expect.poll(() => page.locator('#audit').textContent(), { timeout: 10_000 }).toContain('override.set');
    await page.screenshot({ path: join(SHOTS, '3-pinned.png'), fullPage: true });
    expect(external).toEqual([]);
  }, 90_000);
});
