/**
 * registryText (src/metrics/registry-text.ts): the registry part of /metrics/ is the text
 * Registry.metrics() writes, produced one metric at a time with turns of the event loop
 * between slices of SLICE_MS.
 */
import { performance } from 'node:perf_hooks';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { Metrics } from '../../src/metrics/registry.js';
import { registryText, SLICE_MS } from '../../src/metrics/registry-text.js';

describe('registryText', () => {
  it("writes exactly what Registry.metrics() writes (the service's registry, labelled series, histograms)", async () => {
    const m = new Metrics();
    m.requests.observe('POST', '/v1/route', 200, 0.003);
    m.requests.observe('GET', '/v1/rules', 404, 0.2);
    m.failovers.inc({ rule_id: 'r1', from_processor: 'a', to_processor: 'b', tenant_id: 't' });
    m.engineCycleSeconds.observe(0.02);
    const registers = [new Registry()];
    new Counter({ name: 'c_total', help: 'h "quoted" \\ back', labelNames: ['x'], registers }).inc({ x: 'v\n"' }, 2);
    new Gauge({ name: 'g', help: 'g', registers }).set(-1.5);
    new Histogram({ name: 'h', help: 'h', buckets: [0.1, 1], registers }).observe(0.5);
    new Gauge({ name: 'empty', help: 'no values', labelNames: ['y'], registers });
    // Values that move (process CPU, heap) are the same only if both read the same moment: compare the stable ones.
    const stable = (t: string) => t.split('\n').filter((l) => !/^service_process_/.test(l)).join('\n');
    expect(stable(await registryText(m.registry))).toBe(stable(await m.registry.metrics()));
    expect(await registryText(registers[0])).toBe(await registers[0].metrics());
    expect(await registryText(new Registry())).toBe(await new Registry().metrics());
  });

  it('gives the event loop a turn between slices', async () => {
    const registry = new Registry();
    for (let i = 0; i < 20; i++) {
      new Gauge({
        name: `slow_${i}`,
        help: 'takes 0.3 ms to collect',
        registers: [registry],
        collect() {
          const until = performance.now() + 0.3;
          while (performance.now() < until);
          this.set(i);
        },
      });
    }
    let turns = 0;
    let ticking = true;
    const tick = () => {
      turns++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const text = await registryText(registry);
    ticking = false;
    expect(text).toContain('slow_19 19');
    // 6 ms of collection in slices of SLICE_MS (+ the metric that crossed it): a turn after every few metrics.
    expect(turns).toBeGreaterThanOrEqual(Math.floor((20 * 0.3) / (SLICE_MS + 0.3)) - 1);
  });
});
