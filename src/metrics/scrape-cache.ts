/**
 * What a /metrics/ scrape costs the route path, bounded. With 20,000 active rules one
 * rendering is ~12 MB and ~0.16 s of front-thread work; ten scrapers at once made a route
 * wait 1.65 s. So:
 * - renderings start at most once per MAX_AGE_MS, and every scrape that arrives meanwhile
 *   waits for the next one and shares it (never an older text: a scrape always sees state
 *   from after it arrived; a storm of scrapers is answered once a second);
 * - the rendering runs in time slices of at most about SLICE_MS with the event loop free
 *   between them, so a route waits at most one slice, not a whole rendering. Each slice's text
 *   is encoded to bytes and handed to a gzip stream at once: nothing is ever joined, encoded
 *   or compressed in one piece on the front thread (joining and encoding 12 MB of text at the
 *   end of a rendering was one ~20-40 ms block; the compression runs on libuv's thread pool);
 * - the cached text is kept as bytes (a list of slices), plain and gzip-compressed
 *   (Prometheus asks for gzip; ~10× fewer bytes to push through the front thread), and sent
 *   in chunks with back-pressure (stream-reply.ts), so a slow scraper costs no copy of it.
 * A scraper waits at most MAX_AGE_MS plus one rendering, well under any scrape timeout.
 */
import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { createGzip } from 'node:zlib';

/**
 * One rendering, kept as bytes, plain and gzip-compressed (compressed on libuv's thread pool,
 * off the loop); each a list of pieces, concatenated only by the socket.
 */
export interface Scrape {
  plain: Buffer[];
  gzip: Buffer[];
}

export const MAX_AGE_MS = 1000;
/** Front-thread time one slice of a rendering may take before the loop gets a turn. */
export const SLICE_MS = 2;
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
    /** Produces the text in pieces; the event loop runs between two pieces. */
    private readonly render: () => Iterable<string | Promise<string>>,
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
    const run = this.renderSliced();
    this.running = run;
    try {
      return await run;
    } finally {
      if (this.running === run) this.running = null;
    }
  }

  private async renderSliced(): Promise<Scrape> {
    const plain: Buffer[] = [];
    const gzipped: Buffer[] = [];
    const gz = createGzip({ level: 4, chunkSize: SEND_CHUNK });
    gz.on('data', (b: Buffer) => gzipped.push(b));
    const compressed = new Promise<void>((resolve, reject) => {
      gz.once('end', resolve);
      gz.once('error', reject);
    });
    let text: string[] = [];
    const endSlice = () => {
      if (text.length === 0) return;
      const bytes = Buffer.from(text.join(''), 'utf8');
      text = [];
      plain.push(bytes);
      gz.write(bytes); // queued; compressed on the thread pool while the next slices render
    };
    try {
      let sliceStart = performance.now();
      for (const piece of this.render()) {
        text.push(typeof piece === 'string' ? piece : await piece);
        if (performance.now() - sliceStart >= SLICE_MS) {
          endSlice();
          await nextTurn();
          sliceStart = performance.now();
        }
      }
      endSlice();
    } catch (e) {
      gz.destroy();
      throw e;
    }
    gz.end();
    await compressed;
    this.renders++;
    return { plain, gzip: gzipped };
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
