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

/** What kinds[] says of a key position. */
const EMPTY = 0;
const NO_VALUE = 1;
const STRING = 2;

export class MatchMemo<T> {
  // keys[slot * ATTRIBUTE_COUNT + i]: value i of the tuple in the slot, and kinds[] what it is
  // (EMPTY slot, NO_VALUE for a null, or a STRING in keys[]). Kept apart so that every compare
  // is string against string, which optimized code does inline; a compare that may meet null
  // or undefined is a call to V8's generic equality.
  private readonly keys: string[] = new Array<string>(MEMO_SLOTS * ATTRIBUTE_COUNT).fill('');
  private readonly kinds = new Uint8Array(MEMO_SLOTS * ATTRIBUTE_COUNT).fill(EMPTY);
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

  /**
   * Whether the memo holds this tuple in `slot`; its answer is then answerAt(slot) (undefined
   * is a remembered "no rule"). A boolean rather than a sentinel value: comparing an answer
   * (an object or undefined) with a sentinel of another kind is a call to V8's generic
   * equality on every route.
   */
  holds(slot: number, values: readonly (string | null)[]): boolean {
    const keys = this.keys;
    const kinds = this.kinds;
    const b = slot * ATTRIBUTE_COUNT;
    for (let i = 0; i < ATTRIBUTE_COUNT; i++) {
      const v = values[i];
      if (v === null) {
        if (kinds[b + i] !== NO_VALUE) return false;
      } else if (kinds[b + i] !== STRING || keys[b + i] !== v) return false;
    }
    return true;
  }

  answerAt(slot: number): T | undefined {
    return this.answers[slot];
  }

  remember(slot: number, values: readonly (string | null)[], answer: T | undefined): void {
    const b = slot * ATTRIBUTE_COUNT;
    for (let i = 0; i < ATTRIBUTE_COUNT; i++) {
      const v = values[i];
      this.kinds[b + i] = v === null ? NO_VALUE : STRING;
      this.keys[b + i] = v === null ? '' : v;
    }
    this.answers[slot] = answer;
  }
}
