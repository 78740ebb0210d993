/**
 * Rendering on the front thread in time slices of at most about SLICE_MS with the event loop
 * free between them, so that a route waits at most one slice, not a whole rendering. Each
 * slice's text is encoded to bytes and handed to a gzip stream at once: nothing is ever joined,
 * encoded or compressed in one piece on the front thread (joining and encoding 12 MB of text at
 * the end of a rendering was one ~20-40 ms block; the compression runs on libuv's thread pool).
 * Used for the whole text when the metrics render thread is down (scrape-renderer.ts).
 */
import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { createGzip } from 'node:zlib';
import { SEND_CHUNK, type Scrape } from './scrape-cache.js';

/** Front-thread time one slice of a rendering may take before the loop gets a turn. */
export const SLICE_MS = 2;

/** The text of `pieces`, produced in slices; the event loop runs between two slices. */
export async function renderSliced(pieces: Iterable<string | Promise<string>>): Promise<Scrape> {
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
    for (const piece of pieces) {
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
  return { gzip: gzipped, plain: () => Promise.resolve(plain) };
}
