import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MatchMemo, MAX_MEMO_ENTRIES, MEMO_ENTRIES, WAYS } from '../../src/routing/match-memo.js';
import { RuleTrie } from '../../src/routing/trie.js';

const W = '*';
/** Six attributes: the given ones padded with `*`. */
const k = (...a: string[]) => [...a, ...Array(6 - a.length).fill(W)];
/** Six transaction values: the given ones, then null (no value). */
const tx = (...v: (string | null)[]) => [...v, ...Array(6 - v.length).fill(null)] as (string | null)[];
/** The set a tuple takes in a trie's first memo. */
const firstMemo = new MatchMemo<string>();
const setOf = (v: readonly (string | null)[]) => firstMemo.setOf(v);

describe('RuleTrie: trailing wildcards kept as a tail', () => {
  it('a rule ending in `*` and rules passing through where it ends: each answers for its own transactions, in either insertion order', () => {
    const general = k('US', 'USD', 'card');
    const visa = k('US', 'USD', 'card', 'visa');
    const recurring = k('US', 'USD', 'card', '*', 'recurring');
    for (const order of [
      [general, visa, recurring],
      [visa, recurring, general],
      [recurring, general, visa],
    ]) {
      const t = new RuleTrie<string>();
      for (const key of order) expect(t.insert(key, key.join('/'))).toBe(true);
      expect(t.insert(general, 'again')).toBe(false);
      expect(t.match(tx('US', 'USD', 'card', 'visa', 'one_time'))).toBe(visa.join('/'));
      expect(t.match(tx('US', 'USD', 'card', 'amex', 'recurring'))).toBe(recurring.join('/'));
      expect(t.match(tx('US', 'USD', 'card', 'amex', 'one_time', 'micro'))).toBe(general.join('/'));
      expect(t.match(tx('US', 'USD', 'card'))).toBe(general.join('/'));
      expect(t.get(general)).toBe(general.join('/'));
      // Counted as the chains of nodes the rules stand for, whatever is stored: root, US, USD,
      // card; {*, visa}; {*/*, */recurring, visa/*}; one leaf under each of those three.
      expect(t.totalNodes).toBe(4 + 2 + 3 + 3);
      expect(t.remove(general)).toBe(true);
      expect(t.match(tx('US', 'USD', 'card', 'amex', 'one_time'))).toBeUndefined();
      expect(t.match(tx('US', 'USD', 'card', 'visa'))).toBe(visa.join('/'));
      expect(t.remove(visa)).toBe(true);
      expect(t.remove(recurring)).toBe(true);
      expect(t.totalNodes).toBe(1);
    }
  });

  it('the all-wildcard rule matches any transaction, and gives way to any more specific one', () => {
    const t = new RuleTrie<string>();
    expect(t.insert(k(), 'any')).toBe(true);
    expect(t.totalNodes).toBe(7);
    expect(t.match(tx('GB', 'GBP'))).toBe('any');
    expect(t.match(tx(null, null, null, null, null, null))).toBe('any');
    expect(t.insert(k('GB'), 'gb')).toBe(true);
    expect(t.match(tx('GB', 'GBP'))).toBe('gb');
    expect(t.match(tx('FR', 'EUR'))).toBe('any');
    expect(t.remove(k())).toBe(true);
    expect(t.match(tx('FR', 'EUR'))).toBeUndefined();
  });
});

describe('RuleTrie insert/get/remove', () => {
  it('starts with the root only', () => {
    const t = new RuleTrie<string>();
    expect(t.totalNodes).toBe(1);
    expect(t.totalRules).toBe(0);
    expect(t.match(tx('US', 'USD', 'card', 'visa', 'one_time', 'micro'))).toBeUndefined();
  });

  it('insert adds one node per new level and refuses an existing key', () => {
    const t = new RuleTrie<string>();
    expect(t.insert(k('US', 'USD', 'card'), 'a')).toBe(true);
    expect(t.totalNodes).toBe(7);
    expect(t.totalRules).toBe(1);
    // Shares US/USD: adds card-type, type, tier levels under a new payment method.
    expect(t.insert(k('US', 'USD', 'wallet'), 'b')).toBe(true);
    expect(t.totalNodes).toBe(11);
    expect(t.insert(k('US', 'USD', 'card'), 'c')).toBe(false);
    expect(t.totalNodes).toBe(11);
    expect(t.totalRules).toBe(2);
    expect(t.get(k('US', 'USD', 'card'))).toBe('a');
  });

  it('get is exact: no wildcard matching', () => {
    const t = new RuleTrie<string>();
    t.insert(k('*', 'USD'), 'any_usd');
    expect(t.get(k('*', 'USD'))).toBe('any_usd');
    expect(t.get(k('US', 'USD'))).toBeUndefined();
    expect(t.get(k('*', 'USD', 'card'))).toBeUndefined();
    expect(t.get(k('*'))).toBeUndefined();
  });

  it('remove prunes empty branches back to the shared prefix', () => {
    const t = new RuleTrie<string>();
    t.insert(k('US', 'USD', 'card'), 'a');
    t.insert(k('US', 'USD', 'card', 'visa'), 'b');
    expect(t.totalNodes).toBe(10); // root + US + USD + card + {*,visa} + 2×(* , *)
    expect(t.remove(k('US', 'USD', 'card', 'visa'))).toBe(true);
    expect(t.totalNodes).toBe(7);
    expect(t.totalRules).toBe(1);
    expect(t.get(k('US', 'USD', 'card'))).toBe('a');
    expect(t.remove(k('US', 'USD', 'card'))).toBe(true);
    expect(t.totalNodes).toBe(1);
    expect(t.totalRules).toBe(0);
  });

  it('remove of an absent key (missing path, or path without a value) is false and changes nothing', () => {
    const t = new RuleTrie<string>();
    t.insert(k('US', 'USD', 'card', 'visa'), 'a');
    expect(t.remove(k('US', 'EUR'))).toBe(false);
    expect(t.remove(k('US', 'USD', 'card'))).toBe(false); // US/USD/card/*/*/* does not exist
    expect(t.remove(k('US', 'USD', 'card', 'visa', 'one_time'))).toBe(false);
    expect(t.totalNodes).toBe(7);
    expect(t.totalRules).toBe(1);
    expect(t.remove(k('US', 'USD', 'card', 'visa'))).toBe(true);
    expect(t.remove(k('US', 'USD', 'card', 'visa'))).toBe(false);
    expect(t.totalNodes).toBe(1);
  });

  it('a removed key can be inserted again, and node counts stay exact over many inserts and removes', () => {
    const t = new RuleTrie<number>();
    const keys: string[][] = [];
    for (const c of ['US', 'GB', '*']) for (const cur of ['USD', '*']) for (const pm of ['card', 'wallet', '*']) keys.push(k(c, cur, pm));
    keys.forEach((key, i) => expect(t.insert(key, i)).toBe(true));
    expect(t.totalRules).toBe(keys.length);
    const full = t.totalNodes;
    // 3 countries, 6 currency nodes, 18 payment-method nodes, each with 3 more levels below.
    expect(full).toBe(1 + 3 + 6 + 18 * 4);
    for (const key of keys) expect(t.remove(key)).toBe(true);
    expect(t.totalNodes).toBe(1);
    expect(t.totalRules).toBe(0);
    keys.forEach((key, i) => expect(t.insert(key, i)).toBe(true));
    expect(t.totalNodes).toBe(full);
  });
});

describe('RuleTrie match', () => {
  it('an exact value beats `*` at each level', () => {
    const t = new RuleTrie<string>();
    t.insert(k('US', 'USD', 'card', 'visa'), 'visa');
    t.insert(k('US', 'USD', 'card'), 'card');
    t.insert(k('*', 'USD'), 'any_usd');
    expect(t.match(tx('US', 'USD', 'card', 'visa', 'one_time', 'standard'))).toBe('visa');
    expect(t.match(tx('US', 'USD', 'card', 'mastercard', 'one_time', 'standard'))).toBe('card');
    expect(t.match(tx('DE', 'USD', 'card', 'visa', 'one_time', 'standard'))).toBe('any_usd');
    expect(t.match(tx('DE', 'EUR', 'card', 'visa', 'one_time', 'standard'))).toBeUndefined();
  });

  it('backtracks to `*` when the exact branch has no complete match below', () => {
    const t = new RuleTrie<string>();
    t.insert(k('GB', 'GBP', 'card', 'visa', 'recurring'), 'visa_recurring');
    t.insert(k('GB', 'GBP', 'card'), 'card');
    t.insert(k('FR', 'EUR'), 'fr_eur');
    t.insert(k('*', 'USD'), 'any_usd');
    expect(t.match(tx('GB', 'GBP', 'card', 'visa', 'recurring'))).toBe('visa_recurring');
    expect(t.match(tx('GB', 'GBP', 'card', 'visa', 'one_time'))).toBe('card');
    // Backtracking at the first level.
    expect(t.match(tx('FR', 'USD', 'card'))).toBe('any_usd');
    expect(t.match(tx('FR', 'EUR', 'card'))).toBe('fr_eur');
  });

  it('backtracks several levels up', () => {
    const t = new RuleTrie<string>();
    t.insert(k('US', 'USD', 'card', 'visa', 'one_time', 'premium'), 'deep');
    t.insert(k('US'), 'us');
    t.insert(k(), 'catch_all');
    expect(t.match(tx('US', 'USD', 'card', 'visa', 'one_time', 'premium'))).toBe('deep');
    expect(t.match(tx('US', 'USD', 'card', 'visa', 'one_time', 'micro'))).toBe('us');
    expect(t.match(tx('JP', 'JPY', 'card', 'visa', 'one_time', 'micro'))).toBe('catch_all');
  });

  it('the earliest position where rules differ decides', () => {
    const t = new RuleTrie<string>();
    t.insert(k('DE', '*', 'card'), 'de_card');
    t.insert(k('*', 'CHF', 'card', 'visa', 'one_time', 'micro'), 'chf_very_specific');
    expect(t.match(tx('DE', 'CHF', 'card', 'visa', 'one_time', 'micro'))).toBe('de_card');
    expect(t.match(tx('IT', 'CHF', 'card', 'visa', 'one_time', 'micro'))).toBe('chf_very_specific');
  });

  it('a position without a value (null) only matches `*`', () => {
    const t = new RuleTrie<string>();
    t.insert(k('JP', 'JPY', 'card', '*', '*', 'premium'), 'premium');
    t.insert(k('JP', 'JPY', 'card', 'visa'), 'visa');
    expect(t.match(tx('JP', 'JPY', 'card', null, 'one_time', null))).toBeUndefined();
    expect(t.match(tx('JP', 'JPY', 'card', null, 'one_time', 'premium'))).toBe('premium');
    expect(t.match(tx('JP', 'JPY', 'card', 'visa', 'one_time', null))).toBe('visa');
    t.insert(k('JP', 'JPY', 'card'), 'general');
    expect(t.match(tx('JP', 'JPY', 'card', null, 'one_time', null))).toBe('general');
    // The literal string "*" as a transaction value is not special: it follows the exact map
    // (where `*` is never a key) and then the wildcard branch.
    expect(t.match(tx('JP', 'JPY', 'card', '*', 'one_time', '*'))).toBe('general');
  });

  it('a removed rule no longer matches; the more general one takes over', () => {
    const t = new RuleTrie<string>();
    t.insert(k('US', 'USD', 'card', 'visa'), 'visa');
    t.insert(k('US', 'USD', 'card'), 'card');
    t.remove(k('US', 'USD', 'card', 'visa'));
    expect(t.match(tx('US', 'USD', 'card', 'visa', 'one_time'))).toBe('card');
  });

  it('any string is an ordinary key: nothing inherited matches, __proto__ and constructor are values like others', () => {
    const t = new RuleTrie<string>();
    expect(t.match(tx('US', 'USD', 'card', 'constructor'))).toBeUndefined();
    expect(t.match(tx('US', 'USD', 'card', 'toString'))).toBeUndefined();
    t.insert(k('US', 'USD', 'card'), 'card');
    expect(t.match(tx('US', 'USD', 'card', '__proto__'))).toBe('card');
    expect(t.insert(k('US', 'USD', 'card', '__proto__'), 'proto')).toBe(true);
    expect(t.insert(k('US', 'USD', 'card', 'constructor'), 'ctor')).toBe(true);
    expect(t.match(tx('US', 'USD', 'card', '__proto__'))).toBe('proto');
    expect(t.match(tx('US', 'USD', 'card', 'constructor'))).toBe('ctor');
    expect(t.match(tx('US', 'USD', 'card', 'hasOwnProperty'))).toBe('card');
    const nodes = t.totalNodes;
    expect(t.remove(k('US', 'USD', 'card', '__proto__'))).toBe(true);
    expect(t.totalNodes).toBe(nodes - 3);
    expect(t.match(tx('US', 'USD', 'card', '__proto__'))).toBe('card');
    expect(t.get(k('US', 'USD', 'card', 'constructor'))).toBe('ctor');
  });

  it('prunes a level whose last exact child is removed', () => {
    const t = new RuleTrie<string>();
    t.insert(k('US', 'USD', 'card', 'visa'), 'visa');
    expect(t.totalNodes).toBe(7);
    expect(t.remove(k('US', 'USD', 'card', 'visa'))).toBe(true);
    expect(t.totalNodes).toBe(1);
    expect(t.insert(k('US', 'USD', 'card', 'visa'), 'again')).toBe(true);
    expect(t.match(tx('US', 'USD', 'card', 'visa'))).toBe('again');
  });
});

/** The trie's semantics by brute force: among the matching rules, the one exact earliest (lexicographic on exact > *). */
function bruteMatch(rules: Map<string, string[]>, values: (string | null)[]): string | undefined {
  let best: string | undefined;
  let bestKey = '';
  for (const [name, attrs] of rules) {
    if (!attrs.every((a, i) => a === W || a === values[i])) continue;
    const key = attrs.map((a) => (a === W ? '0' : '1')).join('');
    if (best === undefined || key > bestKey) [best, bestKey] = [name, key];
  }
  return best;
}

describe('RuleTrie match memo', () => {
  it('answers exactly as a walk would through any sequence of inserts, removals and repeated matches', () => {
    const attr = fc.constantFrom('A', 'B', W);
    const value = fc.constantFrom('A', 'B', 'C', null);
    const op = fc.oneof(
      fc.record({ kind: fc.constant('insert' as const), attrs: fc.array(attr, { minLength: 6, maxLength: 6 }) }),
      fc.record({ kind: fc.constant('remove' as const), attrs: fc.array(attr, { minLength: 6, maxLength: 6 }) }),
      fc.record({ kind: fc.constant('match' as const), values: fc.array(value, { minLength: 6, maxLength: 6 }) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 120 }), (ops) => {
        const t = new RuleTrie<string>();
        const rules = new Map<string, string[]>();
        const seen: (string | null)[][] = [];
        for (const o of ops) {
          if (o.kind === 'insert') {
            const name = o.attrs.join('');
            if (t.insert(o.attrs, name)) rules.set(name, o.attrs);
          } else if (o.kind === 'remove') {
            if (t.remove(o.attrs)) rules.delete(o.attrs.join(''));
          } else seen.push(o.values);
          // Every tuple asked so far, again: memoised answers must follow the changes.
          for (const v of seen) expect(t.match(v)).toBe(bruteMatch(rules, v));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('tuples sharing a slot do not answer for each other', () => {
    const t = new RuleTrie<string>();
    t.insert(k('US', 'USD'), 'usd');
    t.insert(k('US', 'EUR'), 'eur');
    const memo = setOf(tx('US', 'USD'));
    // Find a tuple of another currency that lands in the same slot.
    let other: (string | null)[] | undefined;
    const L = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
    for (let i = 0; i < 26 * 26 * 26 && !other; i++) {
      const v = tx('US', L[i % 26] + L[Math.floor(i / 26) % 26] + L[Math.floor(i / 676)]);
      if (v[1] !== 'USD' && v[1] !== 'EUR' && setOf(v) === memo) other = v;
    }
    expect(other).toBeDefined();
    expect(t.match(tx('US', 'USD'))).toBe('usd');
    expect(t.match(other!)).toBeUndefined();
    expect(t.match(tx('US', 'USD'))).toBe('usd');
    expect(t.match(tx('US', 'EUR'))).toBe('eur');
  });
});

describe('MatchMemo', () => {
  const L = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
  const countries = Array.from({ length: 676 }, (_, i) => L[Math.floor(i / 26)] + L[i % 26]);

  it('spreads tuples that differ in any one position over the sets', () => {
    // The first position varies, the rest are fixed: the usual traffic of one merchant.
    const byCountry = new Set(countries.map((c) => setOf([c, 'USD', 'card', 'visa', 'one_time', 'standard'])));
    // The last position varies.
    const byTier = new Set(countries.map((c) => setOf(['US', 'USD', 'card', 'visa', 'one_time', c])));
    // A random hash puts 676 keys into every one of 64 sets (an empty one has odds of ~1 in 500).
    expect(byCountry.size).toBe(MEMO_ENTRIES / WAYS);
    expect(byTier.size).toBe(MEMO_ENTRIES / WAYS);
  });

  /** The trie with every country's EUR rule, its top-level walks counted. */
  function countedTrie(): { t: RuleTrie<string>; walks: () => number } {
    const t = new RuleTrie<string>();
    for (const c of countries) t.insert(k(c, 'EUR'), c);
    let walks = 0;
    const inner = t as unknown as { walk: (...a: unknown[]) => unknown };
    const walk = inner.walk;
    inner.walk = function (this: unknown, ...a: unknown[]) {
      if (a[2] === 0) walks++;
      return walk.apply(this, a);
    };
    return { t, walks: () => walks };
  }

  it("answers a merchant's 40 usual tuples from the memo once it has seen them", () => {
    const { t, walks } = countedTrie();
    const usual = countries.slice(100, 140).map((c) => tx(c, 'EUR'));
    for (const v of usual) expect(t.match(v)).toBe(v[0]);
    expect(walks()).toBe(40);
    for (let pass = 0; pass < 3; pass++) for (const v of usual) expect(t.match(v)).toBe(v[0]);
    // No set holds five of them: none is walked again.
    expect(walks()).toBe(40);
  });

  it('a tuple seen once replaces the entry of its set not hit since, not one in use', () => {
    const { t, walks } = countedTrie();
    // Five tuples of one set: the set holds four.
    const bySet = new Map<number, (string | null)[][]>();
    for (const c of countries) {
      const v = tx(c, 'EUR');
      const same = bySet.get(setOf(v)) ?? [];
      same.push(v);
      bySet.set(setOf(v), same);
    }
    const [a, b, c, d, once] = [...bySet.values()].find((vs) => vs.length >= WAYS + 1)!;
    for (const v of [a, b, c, d]) t.match(v);
    for (const v of [a, b, c]) t.match(v); // d is not routed again
    expect(walks()).toBe(4); // all four held at once (two ways per set walked the last three again)
    expect(t.match(once)).toBe(once[0]);
    expect(walks()).toBe(5);
    for (let pass = 0; pass < 3; pass++) for (const v of [a, b, c, once]) expect(t.match(v)).toBe(v[0]);
    expect(walks()).toBe(5); // once took d's entry; a, b and c kept theirs
    expect(t.match(d)).toBe(d[0]);
    expect(walks()).toBe(6);
  });

  const memoOf = (t: RuleTrie<string>) => (t as unknown as { memo: MatchMemo<string> | null }).memo;

  it('a merchant routing more tuples than the memo holds gets a larger one, until they fit', () => {
    const { t, walks } = countedTrie();
    const many = countries.slice(0, 300).map((c) => tx(c, 'EUR'));
    for (let pass = 0; pass < 10; pass++) for (const v of many) expect(t.match(v)).toBe(v[0]);
    const before = walks();
    for (let pass = 0; pass < 3; pass++) for (const v of many) expect(t.match(v)).toBe(v[0]);
    // 256 entries missed ~40% of these on every pass (sets of four holding five or more).
    expect(walks() - before).toBeLessThanOrEqual(18); // ≤ 2% of 900 routes
    expect(memoOf(t)!.entries).toBeGreaterThan(MEMO_ENTRIES);
  });

  it('a merchant with a few dozen tuples keeps the first memo; none grows past MAX_MEMO_ENTRIES', () => {
    const { t } = countedTrie();
    const usual = countries.slice(100, 140).map((c) => tx(c, 'EUR'));
    for (let pass = 0; pass < 50; pass++) for (const v of usual) t.match(v);
    expect(memoOf(t)!.entries).toBe(MEMO_ENTRIES);
    // Every route a tuple not seen before (no rule for a three-letter country: remembered as no match).
    const L = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
    for (let i = 0; i < 26 * 26 * 26; i++) expect(t.match(tx('USA', L[i % 26] + L[Math.floor(i / 26) % 26] + L[Math.floor(i / 676)]))).toBeUndefined();
    expect(memoOf(t)!.entries).toBe(MAX_MEMO_ENTRIES);
  });
});
