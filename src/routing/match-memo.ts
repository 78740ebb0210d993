/**
 * A small memo of a trie's recent answers (RuleTrie.match): the rule found for a tuple of
 * transaction values, in MEMO_ENTRIES entries grouped in sets of WAYS (set-associative: a tuple
 * may sit in any entry of its set). Payment traffic repeats a limited set of tuples (country,
 * currency, method, card, type, tier), and a hit costs a few cache lines instead of a walk
 * through up to six trie levels: at 100,000 rules the trie does not stay in the cache and the
 * walk was the route path's largest cost after the network.
 *
 * Why four ways: with one entry per place, 40 tuples in 256 places missed ~15% of the time (the
 * birthday bound). With two per set, a set that three of them share misses on every one of its
 * tuples in turn: the benchmark's 40 tuples per tenant missed 5-6% of routes that way (issue 20's
 * twentieth pass), each miss a walk through a trie out of cache. Four per set need five tuples
 * in one set of 64 for that. A new tuple replaces an entry not hit since the hand last passed it
 * (the clock, or second-chance, policy), so a tuple seen once does not push out one that is
 * routed all day.
 *
 * Why it grows: a merchant whose traffic cycles through more tuples than its sets hold misses
 * on nearly all of them (200 tuples in 256 entries missed 34-47% of routes, a walk each). A
 * memo that has missed more times than it has entries is replaced by one twice its size, up to
 * MAX_MEMO_ENTRIES: a tenant routing a few dozen tuples keeps the small one, and no tenant
 * holds more than ~250 KB of it.
 *
 * The trie drops its memo on every change, so an answer is never older than the rule set;
 * entries are compared value by value, so tuples sharing a set only cost a walk.
 */
import { ATTRIBUTE_COUNT } from './attributes.js';

/** Entries of a trie's first memo (a power of two): ~16 KB per tenant that routes. */
export const MEMO_ENTRIES = 256;
/** Entries of the largest memo a trie grows to (a power of two): ~250 KB. */
export const MAX_MEMO_ENTRIES = 4096;
/** Entries per set (a power of two). */
export const WAYS = 4;

/** What kinds[] says of a key position. */
const EMPTY = 0;
const NO_VALUE = 1;
const STRING = 2;

/** Returned by find() when no entry of the set holds the tuple. */
export const MISS = -1;

export class MatchMemo<T> {
  // keys[entry * ATTRIBUTE_COUNT + i]: value i of the entry's tuple, and kinds[] what it is
  // (EMPTY entry, NO_VALUE for a null, or a STRING in keys[]). Kept apart so that every compare
  // is string against string, which optimized code does inline; a compare that may meet null
  // or undefined is a call to V8's generic equality.
  private readonly keys: string[];
  private readonly kinds: Uint8Array;
  private readonly answers: (T | undefined)[];
  /** Per entry, 1 when it was hit since the clock's hand last passed it. */
  private readonly hit: Uint8Array;
  /** Per set, the way the clock's hand points at: where the search for an entry to replace starts. */
  private readonly hand: Uint8Array;
  /** setOf() keeps these bits of a tuple's hash: sets - 1. */
  private readonly setMask: number;
  /** Tuples remembered (misses) since this memo was made. */
  private misses = 0;

  /** `entries`: a power of two, at least WAYS. */
  constructor(readonly entries = MEMO_ENTRIES) {
    this.keys = new Array<string>(entries * ATTRIBUTE_COUNT).fill('');
    this.kinds = new Uint8Array(entries * ATTRIBUTE_COUNT).fill(EMPTY);
    this.answers = new Array<T | undefined>(entries).fill(undefined);
    this.hit = new Uint8Array(entries);
    this.hand = new Uint8Array(entries / WAYS);
    this.setMask = entries / WAYS - 1;
  }

  /** True once the memo has missed more tuples than it holds: its traffic needs a larger one. */
  get outgrown(): boolean {
    return this.misses > this.entries;
  }

  /**
   * A tuple's hash (a small integer; setOf() keeps its low bits): each value's length and
   * first, middle and last characters, mixed in with a multiply (FNV-1a style) so that every
   * position reaches every bit of the hash.
   * (A shift-and-xor mix let the later positions push the first one out: the 676 two-letter
   * countries with one currency shared 8 places, and most routes walked the trie.) Cheap, and
   * collisions only cost a walk.
   */
  private static hashOf(values: readonly (string | null)[]): number {
    let h = 0x811c9dc5 | 0;
    for (let i = 0; i < ATTRIBUTE_COUNT; i++) {
      const v = values[i];
      const n = v === null ? 0 : v.length;
      const x = n === 0 ? i : n ^ (v!.charCodeAt(0) << 8) ^ (v!.charCodeAt(n >> 1) << 16) ^ (v!.charCodeAt(n - 1) << 24);
      h = Math.imul(h ^ x, 0x01000193);
    }
    return (h ^ (h >>> 15) ^ (h >>> 23)) & 0x3fffffff;
  }

  /** The set of this memo a tuple belongs to. */
  setOf(values: readonly (string | null)[]): number {
    return MatchMemo.hashOf(values) & this.setMask;
  }

  /**
   * The entry of `set` that holds this tuple, or MISS; its answer is answerAt(entry) (undefined
   * is a remembered "no rule"). An index rather than the answer or a sentinel: comparing an
   * answer (an object or undefined) with a sentinel of another kind is a call to V8's generic
   * equality on every route.
   */
  find(set: number, values: readonly (string | null)[]): number {
    const first = set * WAYS;
    for (let entry = first; entry < first + WAYS; entry++) {
      if (this.entryHolds(entry, values)) {
        this.hit[entry] = 1;
        return entry;
      }
    }
    return MISS;
  }

  answerAt(entry: number): T | undefined {
    return this.answers[entry];
  }

  remember(set: number, values: readonly (string | null)[], answer: T | undefined): void {
    const entry = this.replaceable(set);
    const b = entry * ATTRIBUTE_COUNT;
    for (let i = 0; i < ATTRIBUTE_COUNT; i++) {
      const v = values[i];
      this.kinds[b + i] = v === null ? NO_VALUE : STRING;
      this.keys[b + i] = v === null ? '' : v;
    }
    this.answers[entry] = answer;
    this.misses++;
    this.hit[entry] = 0; // a tuple seen once is the next to go, unless it is seen again
  }

  /** The entry of `set` a new tuple takes: the clock's hand passes over (and clears) entries hit since its last pass. */
  private replaceable(set: number): number {
    const first = set * WAYS;
    let way = this.hand[set];
    while (this.hit[first + way] === 1) {
      this.hit[first + way] = 0;
      way = (way + 1) & (WAYS - 1);
    }
    this.hand[set] = (way + 1) & (WAYS - 1);
    return first + way;
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
