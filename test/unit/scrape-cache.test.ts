/**
 * The scrape cache with the front thread's sliced rendering (sliced-render.ts): the bytes are
 * exactly the pieces joined (plain and gzip), the event loop runs during a long rendering, and
 * concurrent scrapes share one rendering.
 */
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { bufferChunks, ScrapeCache, SEND_CHUNK } from '../../src/metrics/scrape-cache.js';
import { renderSliced, SLICE_MS } from '../../src/metrics/sliced-render.js';

/** Pieces of about 0.05 ms of busy work each, with non-ASCII text to check the encoding. */
function* slowPieces(n: number): Generator<string> {
  for (let i = 0; i < n; i++) {
    const until = performance.now() + 0.05;
    while (performance.now() < until);
    yield `line_${i}{x="é✓"} ${i / 7}\n`;
  }
}

const expected = (n: number) => [...slowPieces(n)].join('');

describe('ScrapeCache', () => {
  it('keeps exactly the rendered text, plain and gzip, in several slices', async () => {
    const cache = new ScrapeCache(() =>
      renderSliced(
        (function* () {
          yield Promise.resolve('# first piece, awaited\n');
          yield* slowPieces(2000);
        })(),
      ),
    );
    const scrape = await cache.get();
    const plain = await scrape.plain();
    expect(plain.length).toBeGreaterThan(1); // ~100 ms of work in ~2 ms slices
    const text = '# first piece, awaited\n' + expected(2000);
    expect(Buffer.concat(plain).toString('utf8')).toBe(text);
    expect(gunzipSync(Buffer.concat(scrape.gzip)).toString('utf8')).toBe(text);
    const chunks = [...bufferChunks(plain)];
    expect(chunks.every((c) => c.length <= SEND_CHUNK)).toBe(true);
    expect(Buffer.concat(chunks).toString('utf8')).toBe(text);
  });

  it('lets the event loop run between slices of one rendering', async () => {
    const cache = new ScrapeCache(() => renderSliced(slowPieces(4000))); // ~200 ms of work
    const gaps: number[] = [];
    let last = performance.now();
    const timer = setInterval(() => {
      const now = performance.now();
      gaps.push(now - last);
      last = now;
    }, 1);
    const start = performance.now();
    await cache.get();
    const wallMs = performance.now() - start;
    clearInterval(timer);
    expect(gaps.length).toBeGreaterThan(10);
    // The loop was never held for the whole rendering. On a busy machine the process itself can
    // be descheduled for a few hundred ms, so the bound is relative to the rendering's wall time
    // (a rendering in one piece holds the loop for all of it), with 60 ms of slack when quiet.
    expect(Math.max(...gaps)).toBeLessThan(Math.max(SLICE_MS + 60, wallMs / 2));
  });

  it('answers concurrent scrapes with one rendering', async () => {
    const cache = new ScrapeCache(() => renderSliced(slowPieces(100)));
    const all = await Promise.all(Array.from({ length: 10 }, () => cache.get()));
    expect(cache.renders).toBe(1);
    expect(new Set(all).size).toBe(1);
  });
});
