/**
 * MurmurHash3's 32-bit finaliser (fmix32): every input bit reaches every output bit, so the low
 * bits of neighbouring inputs differ. Shared by the hashes the layers above build from their
 * own words (the decoder's string cache slot, a checkpoint's change hash, Tier 3's sampling
 * seeds). Returns a signed 32-bit integer.
 */
export function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}
