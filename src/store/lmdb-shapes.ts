/**
 * One hidden class for every LMDB database object and every database's msgpack encoder.
 *
 * lmdb-js and msgpackr add a property to these objects the first time each is used: a
 * database gets `lastSize` at its first read, its encoder `lastNamedStructuresLength` at its
 * first write. So a database that was read at start (the engine checkpoints, restored) and
 * written only later has a different hidden class from the ones written before it, and
 * the first write to it — the first checkpoint after the first evaluation under traffic —
 * deoptimised the optimised write path shared by every database: LmdbCollection.put and
 * write, msgpackr's `encode`, lmdb-js's `writeInstructions` ("wrong map"). V8 then compiled
 * them again a few cycles later, ~25-30 ms of compile jobs on the service's one core while
 * routes waited (issue 20's scrape + cycle tail).
 *
 * Giving both properties at open, with the values lmdb-js and msgpackr treat as "not yet"
 * (read.js overwrites lastSize at every read before using it; msgpackr reads
 * `lastNamedStructuresLength || 0`), makes every database look alike from the start. The test
 * (test/unit/lmdb-shapes.test.ts) checks the hidden classes, so an lmdb-js or msgpackr upgrade
 * that adds another lazy property shows there.
 */
interface LazyFields {
  lastSize?: number;
  encoder?: { lastNamedStructuresLength?: number } | null;
}

export function withUniformShape<D>(db: D): D {
  const d = db as LazyFields;
  if (d.lastSize === undefined) d.lastSize = 0;
  const encoder = d.encoder;
  if (encoder && encoder.lastNamedStructuresLength === undefined) encoder.lastNamedStructuresLength = 0;
  return db;
}
