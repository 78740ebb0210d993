/**
 * Values are stored as msgpack (bytea), like LMDB stores them: numbers keep NaN and ±Infinity
 * (engine checkpoints hold NaN), Dates stay Dates, and nothing is lost on the way
 * through JSON. Records (shared structures) are off: each value decodes on its own.
 */
import { Packr } from 'msgpackr';

const packr = new Packr({ useRecords: false, moreTypes: true });

export function encodeValue(v: unknown): Buffer {
  return packr.pack(v);
}

export function decodeValue<V>(b: Buffer): V {
  return packr.unpack(b) as V;
}
