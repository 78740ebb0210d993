/**
 * What a /metrics/ scrape costs the route path, bounded. With 20,000 active rules one
 * rendering is ~12-26 MB and ~0.16-0.3 s of work; ten scrapers at once made a route wait
 * 1.65 s when it was done on the front thread in one piece. So:
 * - renderings start at most once per MAX_AGE_MS, and every scrape that arrives meanwhile
 *   waits for the next one and shares it (never an older text: a scrape always sees state
 *   from after it arrived; a storm of scrapers is answered once a second);
 * - the rendering itself is done off the front thread when it can be (scrape-renderer.ts:
 *   the metrics render thread renders the per-rule families and compresses), else on the front
 *   thread in time slices (sliced-render.ts);
 * - the cached text is kept as bytes, plain and gzip-compressed (Prometheus asks for gzip;
 *   ~10× fewer bytes to push through the front thread), and sent in chunks with back-pressure
 *   (stream-reply.ts), so a slow scraper costs no copy of it.
 * A scraper waits at most MAX_AGE_MS plus one rendering, well under any scrape timeout.
 */
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';

/**
 * One rendering, kept as bytes: gzip-compressed (one gzip member), and plain for the scrapers
 * that do not accept gzip; each a list of pieces, concatenated only by the socket. The plain
 * bytes may be made on demand (`lazyPlain`): Prometheus always asks for gzip, and holding 26 MB
 * of plain text per rendering on the front thread costs it major garbage collections.
 */
export interface Scrape {
  gzip: Buffer[];
  plain(): Promise<Buffer[]>;
}

/** Plain bytes decompressed from `gzip` on libuv's thread pool at the first call, then kept. */
export function lazyPlain(gzip: readonly Buffer[]): () => Promise<Buffer[]> {
  let plain: Promise<Buffer[]> | null = null;
  return () => (plain ??= gunzipAsync(Buffer.concat(gzip)).then((b) => [b]));
}

const gunzipAsync = promisify(gunzip);

export const MAX_AGE_MS = 1000;
/** Size of the pieces a cached text is sent in. */
export const SEND_CHUNK = 64 * 1024;

export class ScrapeCache {
  /** The rendering under way, if any. */
  private running: Promise<Scrape> | null = null;
  /** The next rendering, promised to the scrapes that arrived since `running` started. */
  private queued: Promise<Scrape> | null = null;
  private lastStart = -Infinity;
  /** Renderings done (for tests and the benchmark). */
  renders = 0;

  constructor(
    /** Renders the text (scrape-renderer.ts; sliced-render.ts for text made in pieces). */
    private readonly render: () => Promise<Scrape>,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The text of a rendering that starts after this call (so never older than the request),
   * shared with every other scrape waiting for it; renderings start at most once per
   * MAX_AGE_MS. A scrape arriving within a second of the last rendering waits for the next.
   */
  get(): Promise<Scrape> {
    if (this.queued === null) this.queued = this.next();
    return this.queued;
  }

  private async next(): Promise<Scrape> {
    await Promise.resolve(); // let get() store this promise before anything below runs
    if (this.running !== null) await this.running.catch(() => undefined);
    const wait = this.lastStart + MAX_AGE_MS - this.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    this.queued = null; // scrapes from now on wait for the rendering after this one
    this.lastStart = this.now();
    const run = this.render().then((scrape) => {
      this.renders++;
      return scrape;
    });
    this.running = run;
    try {
      return await run;
    } finally {
      if (this.running === run) this.running = null;
    }
  }
}

/** Cached bytes as an iterator of pieces of at most SEND_CHUNK bytes (views of the same memory, no copy). */
export function* bufferChunks(bufs: readonly Buffer[]): Generator<Buffer> {
  for (const buf of bufs) for (let i = 0; i < buf.length; i += SEND_CHUNK) yield buf.subarray(i, i + SEND_CHUNK);
}

/** Whether an Accept-Encoding header value accepts gzip (q=0 refuses it). */
export function acceptsGzip(acceptEncoding: string): boolean {
  return /(^|,)\s*(gzip|\*)\s*(;\s*q=(0?\.\d*[1-9]\d*|1(\.0*)?))?\s*(,|$)/i.test(acceptEncoding);
}
