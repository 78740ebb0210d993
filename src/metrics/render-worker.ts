/**
 * The metrics render thread (started by render-thread.ts): renders the front thread's part of
 * the text followed by the per-rule families, read straight from the shared tables, and
 * compresses it, so that the bulk of a scrape (26 MB of text at 20,000 active rules at Tier 3)
 * costs the front thread nothing but posting a request and sending the compressed bytes (only
 * those are handed back: see Scrape in scrape-cache.ts). It lowers its own scheduling
 * priority first, as the evaluation pool's threads do (engine/worker/priority.ts): when the
 * server has one core, the route path wins it.
 * It keeps each tenant's rule columns between renderings (sent again only when they change).
 * It renders and compresses in short bursts with a brief sleep between them (bursts.ts): a
 * nice value makes its turns rarer, not shorter, and each turn the front thread waits for.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { Bursts } from '../engine/worker/bursts.js';
import { detachOneBuffer } from '../detach-protector.js';
import { lowerThreadPriority } from '../engine/worker/priority.js';
import { GzipWriter } from './gzip-pieces.js';
import { ruleSegmentViews, type RuleSegmentViews } from '../shm/layout.js';
import type { FromRenderThread, RenderRequest, RenderThreadData } from './render-protocol.js';
import { ruleFamilyChunks, type RenderTenant, type RuleColumns } from './rule-families.js';
import { syntheticRequests, WARM_UP_RENDERINGS } from './render-warm-up.js';

const port = parentPort!;
/** This thread only reads the rows: it never publishes a decision, so it has no epochs (layout.ts). */
const NO_DECISION_EPOCHS = new Int32Array(0);

/** What the thread holds between renderings: the rule segments' views, each tenant's rule columns by version. */
interface RenderState {
  segs: RuleSegmentViews[];
  catalogue: Map<string, { version: number; rules: RuleColumns }>;
}

const newState = (): RenderState => ({ segs: [], catalogue: new Map() });
/** The service's tables (the warm-up renders its own, on a state of its own). */
const service = newState();

const bursts = new Bursts();
const pause = () => void bursts.pause();
/** The text goes straight into its gzip member, a piece at a time (the thread sleeps between pieces). */
const out = new GzipWriter(pause);

/** A buffer that owns its whole ArrayBuffer (small results of zlib may sit in Node's shared pool). */
function ownBuffer(b: Buffer): ArrayBuffer {
  if (b.byteOffset === 0 && b.buffer.byteLength === b.length && b.buffer instanceof ArrayBuffer) return b.buffer;
  const copy = Buffer.allocUnsafeSlow(b.length);
  b.copy(copy);
  return copy.buffer as ArrayBuffer;
}

/** `front` then the per-rule families of `tenants`, compressed, in bursts; `out.length` is the plain text's size after. */
function renderText(front: string, from: readonly RuleSegmentViews[], tenants: readonly RenderTenant[]): Buffer {
  bursts.begin();
  out.begin();
  out.write(front);
  for (const chunk of ruleFamilyChunks(from, tenants)) {
    out.write(chunk);
    bursts.pause();
  }
  return out.finish();
}

function render(m: RenderRequest, state: RenderState): FromRenderThread {
  const t0 = performance.now();
  const { segs, catalogue } = state;
  if (m.segments) for (let i = segs.length; i < m.segments.length; i++) segs.push(ruleSegmentViews(m.segments[i], i, NO_DECISION_EPOCHS));
  const tenants: RenderTenant[] = [];
  for (const t of m.tenants) {
    if (t.rules) catalogue.set(t.tenantId, { version: t.version, rules: t.rules });
    const c = catalogue.get(t.tenantId);
    if (c === undefined || c.version !== t.version) throw new Error(`no rule list for tenant ${t.tenantId} at version ${t.version}`);
    tenants.push({ rules: c.rules, predictionEnabled: t.predictionEnabled });
  }
  const gzip = ownBuffer(renderText(m.front, segs, tenants));
  return { type: 'rendered', id: m.id, gzip, plainBytes: out.length, renderMs: performance.now() - t0 };
}

/**
 * The JIT warm-up (render-warm-up.ts): synthetic requests rendered a few times through the same
 * path as real ones, each cloned as a posted message is (so the objects have the shapes real
 * ones have: optimised code that assumed others was thrown away at the first real scrape), then
 * let go.
 */
function warmUp(): void {
  // A real rendering hands its bytes back by transfer, which detaches an ArrayBuffer: done once
  // first (detach-protector.ts), so that the code optimised now survives the first real scrape.
  detachOneBuffer();
  const state = newState();
  const requests = syntheticRequests(WARM_UP_RENDERINGS);
  for (const m of requests) render(structuredClone(m), state);
}

port.on('message', (m: RenderRequest) => {
  let reply: FromRenderThread;
  try {
    reply = render(m, service);
  } catch (e) {
    port.postMessage({ type: 'failed', id: m.id, error: String((e as Error)?.stack ?? e) } satisfies FromRenderThread);
    return;
  }
  if (reply.type === 'rendered') port.postMessage(reply, [reply.gzip]);
});

const { niceIncrement, warmUp: warmUpEnabled } = workerData as RenderThreadData;
const nice = niceIncrement > 0 ? (lowerThreadPriority(niceIncrement)?.nice ?? null) : null;
// Before 'ready': the front thread posts no rendering until then (RenderThread.started).
let warmUpMs: number | null = null;
if (warmUpEnabled) {
  const t0 = performance.now();
  warmUp();
  warmUpMs = Math.round(performance.now() - t0);
}
port.postMessage({ type: 'ready', nice, warmUpMs } satisfies FromRenderThread);
