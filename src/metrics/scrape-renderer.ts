/**
 * One rendering of /metrics/: the front thread's part (the prom-client registry: requests,
 * engine, webhooks, cluster, process; small) followed by the per-rule families (nearly all of
 * the text: 26 MB at 20,000 active rules at Tier 3). The per-rule families are rendered by the
 * metrics render thread from the shared tables, which also compresses the whole text; the front
 * thread renders only its registry part (in slices: registry-text.ts) and posts it with the
 * request. When the thread is down,
 * the whole text is rendered on the front thread in time slices (sliced-render.ts), as before
 * the thread existed; `service_metrics_renderings_total{thread}` and
 * `service_metrics_render_thread_up` show which way scrapes are being rendered.
 */
import { Counter } from 'prom-client';
import type { SharedTables } from '../shm/tables.js';
import type { TenantRegistry } from '../tenants/registry.js';
import { LabelCatalogue } from './label-catalogue.js';
import type { Metrics } from './registry.js';
import { registryText } from './registry-text.js';
import { registerComputed } from './request-metrics.js';
import type { RenderThread } from './render-thread.js';
import { ruleFamilyChunks } from './rule-families.js';
import type { Scrape } from './scrape-cache.js';
import { renderSliced } from './sliced-render.js';

export class ScrapeRenderer {
  private readonly catalogue: LabelCatalogue;
  private readonly renderings: Counter<'thread'>;

  constructor(
    private readonly metrics: Metrics,
    private readonly tables: SharedTables,
    tenants: TenantRegistry,
    private readonly thread: RenderThread,
  ) {
    this.catalogue = new LabelCatalogue(tables, tenants);
    const registers = [metrics.registry];
    this.renderings = new Counter({
      name: 'service_metrics_renderings_total',
      help: 'renderings of /metrics/ finished, by where the per-rule families were rendered: render (the metrics render thread) or front (the front thread, in time slices, while the render thread is down)',
      labelNames: ['thread'],
      registers,
    });
    metrics.gauge('service_metrics_render_thread_up', 'the metrics render thread is running, 0 or 1 (0 while it is restarted after a failure, and before the first scrape when SERVICE_JIT_WARM_UP is false)', [], (g) =>
      g.set(thread.worker !== null ? 1 : 0),
    );
    registerComputed(
      metrics.registry,
      'service_metrics_render_thread_failures_total',
      'failures of the metrics render thread (it died, or a rendering failed or timed out); each is logged and the thread restarted',
      'counter',
      () => [{ labels: {}, value: thread.failures }],
    );
  }

  async render(): Promise<Scrape> {
    let front: string | null = null;
    if (this.thread.available()) {
      try {
        // The registry part once the thread is up (the first scrape starts it), so that both
        // parts of the text are of the same moment.
        await this.thread.started();
        front = await registryText(this.metrics.registry);
        this.tables.ruleCounts.flush(); // the routes and outcomes counted so far, into the rows the thread reads
        const scrape = await this.thread.render(front, this.catalogue.entries(), this.tables.segments().rules);
        this.renderings.inc({ thread: 'render' });
        return scrape;
      } catch {
        // Logged by the thread's supervisor; this rendering is done here instead.
      }
    }
    front ??= await registryText(this.metrics.registry);
    this.tables.ruleCounts.flush();
    const tenants = this.catalogue.entries();
    const scrape = await renderSliced(
      (function* (segs) {
        yield front;
        yield* ruleFamilyChunks(segs, tenants);
      })(this.tables.ruleSegs),
    );
    this.renderings.inc({ thread: 'front' });
    return scrape;
  }
}
