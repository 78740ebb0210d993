/**
 * A small memo of a trie's recent answers (RuleTrie.match): the rule found for a tuple of
 * transaction values, in a direct-mapped table of MEMO_SLOTS entries. Payment traffic repeats
 * a limited set of tuples (country, currency, method, card, type, tier), and a hit costs two
 * cache lines instead of a walk through up to six trie levels: at 100,000 rules the trie does
 * not stay in the cache and the walk was the route path's largest cost after the network.
 * The trie drops its memo on every change, so an answer is never older than the rule set;
 * entries are compared value by value, so two tuples sharing a slot only cost a walk.
 */
import { ATTRIBUTE_COUNT } from './attributes.js';

/** Entries per trie (a power of two): about 8 KB per tenant that routes. */
export const MEMO_SLOTS = 256;

/** Returned by find() when the memo does not hold the tuple (undefined is a remembered "no rule"). */
export const NOT_MEMOISED: unique symbol = Symbol('not memoised');

export class MatchMemo<T> {
  // keys[slot * ATTRIBUTE_COUNT + i]: value i of the tuple in the slot; undefined = empty slot
  // (never equal to a transaction value, which is a string or null).
  private readonly keys: (string | null | undefined)[] = new Array<string | null | undefined>(MEMO_SLOTS * ATTRIBUTE_COUNT).fill(undefined);
  private readonly answers: (T | undefined)[] = new Array<T | undefined>(MEMO_SLOTS).fill(undefined);

  /**
   * The slot of a tuple: each value's length and first, middle and last characters, mixed in
   * with a multiply (FNV-1a style) so that every position reaches every bit of the slot. (A
   * shift-and-xor mix let the later positions push the first one out: the 676 two-letter
   * countries with one currency shared about 12 slots, and most routes walked the trie.)
   * Cheap, and collisions only cost a walk.
   */
  static slotOf(values: readonly (string | null)[]): number {
    let h = 0x811c9dc5 | 0;
    for (let i = 0; i < ATTRIBUTE_COUNT; i++) {
      const v = values[i];
      const n = v === null ? 0 : v.length;
      const x = n === 0 ? i : n ^ (v!.charCodeAt(0) << 8) ^ (v!.charCodeAt(n >> 1) << 16) ^ (v!.charCodeAt(n - 1) << 24);
      h = Math.imul(h ^ x, 0x01000193);
    }
    return (h ^ (h >>> 15) ^ (h >>> 23)) & (MEMO_SLOTS - 1);
  }

  find(slot: number, values: readonly (string | null)[]): T | undefined | typeof NOT_MEMOISED {
    const k = this.keys;
    const b = slot * ATTRIBUTE_COUNT;
    for (let i = 0; i < ATTRIBUTE_COUNT; i++) if (k[b + i] !== values[i]) return NOT_MEMOISED;
    return this.answers[slot];
  }

  remember(slot: number, values: readonly (string | null)[], answer: T | undefined): void {
    const b = slot * ATTRIBUTE_COUNT;
    for (let i = 0; i < ATTRIBUTE_COUNT; i++) this.keys[b + i] = values[i];
    this.answers[slot] = answer;
  }
}
