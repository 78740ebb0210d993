/**
 * The metrics render thread (the compiled dist/src/metrics/render-worker.js) against the front
 * thread's rendering of the same state: the per-rule families are byte for byte the same, with
 * tenants, self-fallback rules, NaN fields, deleted rules and rule changes between renderings
 * (the rule lists are sent again only when they change); the gzip bytes are one gzip member of
 * the same text (curl reads only the first member); and a thread that dies or hangs makes the
 * rendering fall back to the front thread, is logged, and is replaced.
 */
import { getPriority } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LabelCatalogue } from '../../src/metrics/label-catalogue.js';
import { Metrics } from '../../src/metrics/registry.js';
import { RENDER_YOUNG_GENERATION_MB, RenderThread, RESTART_DELAY_MS } from '../../src/metrics/render-thread.js';
import { ruleFamilyChunks } from '../../src/metrics/rule-families.js';
import type { Scrape } from '../../src/metrics/scrape-cache.js';
import { ScrapeRenderer } from '../../src/metrics/scrape-renderer.js';
import { log } from '../../src/log.js';
import { variedState, type VariedState } from '../helpers/metrics-state.js';
import { until } from '../helpers/until.js';

const WORKER = pathToFileURL(fileURLToPath(new URL('../../dist/src/metrics/render-worker.js', import.meta.url)));
const FIRST_FAMILY = '# HELP service_processor_health_status ';

let thread: RenderThread | null = null;
afterEach(async () => {
  await thread?.stop();
  thread = null;
  vi.restoreAllMocks();
});

/** The per-rule families as the front thread renders them (the fallback path's text). */
function frontText(s: VariedState): string {
  return [...ruleFamilyChunks(s.tables.ruleSegs, new LabelCatalogue(s.tables, s.tenants).entries())].join('');
}

const plainOf = async (scrape: Scrape) => Buffer.concat(await scrape.plain()).toString('utf8');
const perRule = (text: string) => text.slice(text.indexOf(FIRST_FAMILY));
/** Renderings counted so far by thread, as the next scrape shows them. */
const renderings = async (m: Metrics) => {
  const text = await m.registry.getSingleMetricAsString('service_metrics_renderings_total');
  const of = (t: string) => Number(new RegExp(`thread="${t}"} (\\d+)`).exec(text)?.[1] ?? 0);
  return { render: of('render'), front: of('front') };
};

describe('metrics render thread', () => {
  it('renders what the front thread renders, across rule changes, as one gzip member', async () => {
    const s = variedState(11, 2000);
    const metrics = new Metrics();
    thread = new RenderThread({ workerUrl: WORKER });
    const renderer = new ScrapeRenderer(metrics, s.tables, s.tenants, thread);
    for (let round = 0; round < 3; round++) {
      const scrape = await renderer.render();
      const text = await plainOf(scrape);
      expect(text.startsWith('# HELP ')).toBe(true); // the registry part comes first...
      // The thread starts at the first rendering, before the registry part is written.
      expect(text).toContain('service_metrics_render_thread_up 1');
      expect(perRule(text)).toBe(frontText(s)); // ...then the per-rule families, as the front thread writes them
      expect(perRule(text).length).toBeGreaterThan(300_000);
      const gz = Buffer.concat(scrape.gzip);
      expect(gunzipSync(gz).toString('utf8')).toBe(text);
      // One member: its trailer holds the length of the whole text (a second member would hold its own).
      expect(gz.readUInt32LE(gz.length - 4)).toBe(Buffer.byteLength(text) % 2 ** 32);
      // Changes before the next rendering: deletions (slots freed, then reused), additions, another tier.
      for (const t of s.tenants.all()) {
        for (let i = 0; i < 50; i++) s.deleteRule(t, `rule_${(round * 997 + i * 31) % 6000}`);
        for (let i = 0; i < 40; i++) s.addRule(t);
      }
      s.tenants.get('off').settings = { ...s.tenants.get('off').settings, predictionEnabled: round % 2 === 0 };
    }
    expect(await renderings(metrics)).toEqual({ render: 3, front: 0 });
    expect(thread.failures).toBe(0);
    // Its young generation is capped: a rendering's text is all short-lived strings, and an
    // uncapped young generation grew to V8's maximum for them and stayed (README, Memory).
    expect(thread.worker!.resourceLimits?.maxYoungGenerationSizeMb).toBe(RENDER_YOUNG_GENERATION_MB);
  });

  it('after its JIT warm-up on synthetic tables, renders the real state exactly, with none of the synthetic rules', async () => {
    const s = variedState(12, 500);
    const metrics = new Metrics();
    const info = vi.spyOn(log, 'info');
    thread = new RenderThread({ workerUrl: WORKER, warmUp: true });
    await thread.started();
    expect(info).toHaveBeenCalledWith('metrics render thread started', expect.objectContaining({ warm_up_ms: expect.any(Number) }));
    const renderer = new ScrapeRenderer(metrics, s.tables, s.tenants, thread);
    for (let round = 0; round < 2; round++) {
      const text = await plainOf(await renderer.render());
      expect(perRule(text)).toBe(frontText(s));
      expect(text).not.toMatch(/warm-up|service_warm_up/);
      for (const t of s.tenants.all()) s.addRule(t); // a new rule list version: the columns are sent again
    }
    expect(await renderings(metrics)).toEqual({ render: 2, front: 0 });
  });

  it('falls back to the front thread when the thread dies, logs it, and restarts it', async () => {
    const s = variedState(12, 500);
    const metrics = new Metrics();
    const errors = vi.spyOn(log, 'error').mockImplementation(() => {});
    thread = new RenderThread({ workerUrl: WORKER });
    const renderer = new ScrapeRenderer(metrics, s.tables, s.tenants, thread);
    await renderer.render();
    const w = thread.worker!;
    await w.terminate(); // as if it had crashed
    const fallback = await plainOf(await renderer.render());
    expect(perRule(fallback)).toBe(frontText(s));
    expect(fallback).toContain('service_metrics_render_thread_up 0');
    expect(await renderings(metrics)).toEqual({ render: 1, front: 1 });
    expect(errors).toHaveBeenCalledWith(expect.stringContaining('metrics render thread failed'), expect.objectContaining({ restart_in_ms: RESTART_DELAY_MS }));
    // A new thread after the delay; renderings go back to it, with the rule lists sent again.
    await until('a new render thread', () => thread!.worker !== null && thread!.worker !== w, 10_000);
    s.addRule(s.tenants.get('acme'));
    const back = await plainOf(await renderer.render());
    expect(perRule(back)).toBe(frontText(s));
    expect(await renderings(metrics)).toEqual({ render: 2, front: 1 });
    expect(thread.failures).toBe(1);
    expect(back).toMatch(/^service_metrics_render_thread_failures_total 1$/m);
  });

  it('falls back when a rendering takes too long, and ends that thread', async () => {
    const s = variedState(13, 100);
    const metrics = new Metrics();
    const errors = vi.spyOn(log, 'error').mockImplementation(() => {});
    // A thread that starts and then never answers.
    const hung = new URL(`data:text/javascript,${encodeURIComponent("import { parentPort } from 'node:worker_threads'; parentPort.postMessage({ type: 'ready', nice: null }); parentPort.on('message', () => {});")}`);
    thread = new RenderThread({ workerUrl: hung, renderTimeoutMs: 300 });
    const renderer = new ScrapeRenderer(metrics, s.tables, s.tenants, thread);
    const t0 = performance.now();
    const text = await plainOf(await renderer.render());
    expect(performance.now() - t0).toBeLessThan(5000);
    expect(perRule(text)).toBe(frontText(s));
    expect(await renderings(metrics)).toEqual({ render: 0, front: 1 });
    expect(errors).toHaveBeenCalledWith(expect.stringContaining('metrics render thread failed'), expect.objectContaining({ reason: 'no rendering within 300 ms' }));
    expect(thread.failures).toBe(1);
  });

  it.skipIf(process.platform !== 'linux' || getPriority() + 3 > 19)('lowers the thread from the front thread as it is created, before its own code runs', async () => {
    const priority = pathToFileURL(fileURLToPath(new URL('../../dist/src/engine/worker/priority.js', import.meta.url))).href;
    // A thread that reports its nice value first thing, then lowers itself twice as the real one does once.
    const probe = new URL(
      `data:text/javascript,${encodeURIComponent(
        `import { parentPort } from 'node:worker_threads'; import { getPriority } from 'node:os'; import { lowerThreadPriority } from '${priority}';` +
          `const atStart = getPriority(); lowerThreadPriority(3); const after = lowerThreadPriority(3).nice;` +
          `parentPort.postMessage({ type: 'ready', nice: atStart * 100 + after }); parentPort.on('message', () => {});`,
      )}`,
    );
    thread = new RenderThread({ workerUrl: probe, niceIncrement: 3 });
    await thread.started();
    const expected = getPriority() + 3; // this process's front thread, plus the increment
    expect(thread.nice).toBe(expected * 100 + expected);
  });
});
