/**
 * A small memo of a trie's recent answers (RuleTrie.match): the rule found for a tuple of
 * transaction values, in MEMO_ENTRIES entries grouped in sets of two (two-way set-associative:
 * a tuple may sit in either entry of its set). Payment traffic repeats a limited set of tuples
 * (country, currency, method, card, type, tier), and a hit costs two cache lines instead of a
 * walk through up to six trie levels: at 100,000 rules the trie does not stay in the cache and
 * the walk was the route path's largest cost after the network. With one entry per place, 40
 * tuples in 256 places missed ~15% of the time (the birthday bound); two entries per set make
 * a miss need three tuples in one set.
 * The trie drops its memo on every change, so an answer is never older than the rule set;
 * entries are compared value by value, so tuples sharing a set only cost a walk.
 */
import { ATTRIBUTE_COUNT } from './attributes.js';

/** Entries per trie (a power of two): about 8 KB per tenant that routes. */
export const MEMO_ENTRIES = 256;
const SETS = MEMO_ENTRIES / 2;

/** What kinds[] says of a key position. */
const EMPTY = 0;
const NO_VALUE = 1;
const STRING = 2;

/** Returned by find() when neither entry of the set holds the tuple. */
export const MISS = -1;

export class MatchMemo<T> {
  // keys[entry * ATTRIBUTE_COUNT + i]: value i of the entry's tuple, and kinds[] what it is
  // (EMPTY entry, NO_VALUE for a null, or a STRING in keys[]). Kept apart so that every compare
  // is string against string, which optimized code does inline; a compare that may meet null
  // or undefined is a call to V8's generic equality.
  private readonly keys: string[] = new Array<string>(MEMO_ENTRIES * ATTRIBUTE_COUNT).fill('');
  private readonly kinds = new Uint8Array(MEMO_ENTRIES * ATTRIBUTE_COUNT).fill(EMPTY);
  private readonly answers: (T | undefined)[] = new Array<T | undefined>(MEMO_ENTRIES).fill(undefined);
  /** Per set, the entry a new tuple replaces (the one not hit last). */
  private readonly victim = new Uint8Array(SETS);

  /**
   * The set of a tuple: each value's length and first, middle and last characters, mixed in
   * with a multiply (FNV-1a style) so that every position reaches every bit of the set number.
   * (A shift-and-xor mix let the later positions push the first one out: the 676 two-letter
   * countries with one currency shared 8 places, and most routes walked the trie.) Cheap, and
   * collisions only cost a walk.
   */
  static setOf(values: readonly (string | null)[]): number {
    let h = 0x811c9dc5 | 0;
    for (let i = 0; i < ATTRIBUTE_COUNT; i++) {
      const v = values[i];
      const n = v === null ? 0 : v.length;
      const x = n === 0 ? i : n ^ (v!.charCodeAt(0) << 8) ^ (v!.charCodeAt(n >> 1) << 16) ^ (v!.charCodeAt(n - 1) << 24);
      h = Math.imul(h ^ x, 0x01000193);
    }
    return (h ^ (h >>> 15) ^ (h >>> 23)) & (SETS - 1);
  }

  /**
   * The entry of `set` that holds this tuple, or MISS; its answer is answerAt(entry) (undefined
   * is a remembered "no rule"). An index rather than the answer or a sentinel: comparing an
   * answer (an object or undefined) with a sentinel of another kind is a call to V8's generic
   * equality on every route.
   */
  find(set: number, values: readonly (string | null)[]): number {
    const first = set * 2;
    if (this.entryHolds(first, values)) {
      this.victim[set] = 1;
      return first;
    }
    if (this.entryHolds(first + 1, values)) {
      this.victim[set] = 0;
      return first + 1;
    }
    return MISS;
  }

  answerAt(entry: number): T | undefined {
    return this.answers[entry];
  }

  remember(set: number, values: readonly (string | null)[], answer: T | undefined): void {
    const entry = set * 2 + this.victim[set];
    this.victim[set] ^= 1;
    const b = entry * ATTRIBUTE_COUNT;
    for (let i = 0; i < ATTRIBUTE_COUNT; i++) {
      const v = values[i];
      this.kinds[b + i] = v === null ? NO_VALUE : STRING;
      this.keys[b + i] = v === null ? '' : v;
    }
    this.answers[entry] = answer;
  }

  private entryHolds(entry: number, values: readonly (string | null)[]): boolean {
    const keys = this.keys;
    const kinds = this.kinds;
    const b = entry * ATTRIBUTE_COUNT;
    for (let i = 0; i < ATTRIBUTE_COUNT; i++) {
      const v = values[i];
      if (v === null) {
        if (kinds[b + i] !== NO_VALUE) return false;
      } else if (kinds[b + i] !== STRING || keys[b + i] !== v) return false;
    }
    return true;
  }
}
