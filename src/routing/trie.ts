/**
 * A per-tenant trie over the six rule attributes. At each level an exact value beats `*`;
 * if the exact branch has no complete match below it, the search backtracks to `*`. So the
 * winner is the rule that is most specific at the earliest position where rules differ.
 * Lookups walk at most 2^6 paths and allocate nothing; updates happen on rule changes only.
 *
 * A node's exact children are a prototype-less object used as a dictionary, not a Map: V8
 * finds an (internalized) key there by identity in one hash table, where a Map lookup also
 * reads each candidate key string of the bucket it probes. At 100,000 rules the trie is out of
 * cache and those reads were most of a route's trie walk (a walk measured 2-3x slower over
 * Maps once other work had evicted the trie). Without a prototype, any string (`__proto__`,
 * `constructor`) is an ordinary key.
 */
import { ATTRIBUTE_COUNT, WILDCARD } from './attributes.js';
import { MatchMemo, MISS } from './match-memo.js';

type Children<T> = Record<string, Node<T> | undefined>;

interface Node<T> {
  exact: Children<T> | null;
  wild: Node<T> | null;
  value: T | undefined; // set on leaves (depth 6) only
}

function newNode<T>(): Node<T> {
  return { exact: null, wild: null, value: undefined };
}

function newChildren<T>(): Children<T> {
  return Object.create(null) as Children<T>;
}

function isEmpty<T>(children: Children<T> | null): boolean {
  for (const _ in children) return false;
  return true;
}

export class RuleTrie<T> {
  private readonly root: Node<T> = newNode();
  private nodes = 1;
  private rules = 0;
  /** Recent answers of match(); dropped on every change (match-memo.ts). */
  private memo: MatchMemo<T> | null = null;

  get totalNodes(): number {
    return this.nodes;
  }
  get totalRules(): number {
    return this.rules;
  }

  /** Inserts under six normalized attributes; returns false if that exact key is taken. */
  insert(attrs: readonly string[], value: T): boolean {
    let node = this.root;
    for (let i = 0; i < ATTRIBUTE_COUNT; i++) {
      const a = attrs[i];
      let next: Node<T> | null | undefined;
      if (a === WILDCARD) {
        next = node.wild;
        if (!next) {
          next = node.wild = newNode();
          this.nodes++;
        }
      } else {
        node.exact ??= newChildren();
        next = node.exact[a];
        if (!next) {
          next = newNode();
          node.exact[a] = next;
          this.nodes++;
        }
      }
      node = next;
    }
    if (node.value !== undefined) return false;
    node.value = value;
    this.rules++;
    this.memo = null;
    return true;
  }

  /** The value stored under exactly these attributes, if any. */
  get(attrs: readonly string[]): T | undefined {
    let node: Node<T> | null | undefined = this.root;
    for (let i = 0; i < ATTRIBUTE_COUNT && node; i++) {
      node = attrs[i] === WILDCARD ? node.wild : node.exact?.[attrs[i]];
    }
    return node?.value;
  }

  /** Removes the value under exactly these attributes, pruning empty branches. */
  remove(attrs: readonly string[]): boolean {
    const path: Node<T>[] = [this.root];
    let node: Node<T> | null | undefined = this.root;
    for (let i = 0; i < ATTRIBUTE_COUNT; i++) {
      node = attrs[i] === WILDCARD ? node.wild : node.exact?.[attrs[i]];
      if (!node) return false;
      path.push(node);
    }
    if (node.value === undefined) return false;
    node.value = undefined;
    this.rules--;
    this.memo = null;
    for (let i = ATTRIBUTE_COUNT; i > 0; i--) {
      const child = path[i];
      if (child.value !== undefined || child.wild || !isEmpty(child.exact)) break;
      const parent = path[i - 1];
      if (attrs[i - 1] === WILDCARD) parent.wild = null;
      else delete parent.exact![attrs[i - 1]];
      this.nodes--;
    }
    return true;
  }

  /**
   * Most specific match for a transaction. `values[i]` is the transaction's value at
   * position i (normalized), or null when it has none (then only `*` matches there).
   */
  match(values: readonly (string | null)[]): T | undefined {
    const memo = (this.memo ??= new MatchMemo<T>());
    const set = MatchMemo.setOf(values);
    const entry = memo.find(set, values);
    if (entry !== MISS) return memo.answerAt(entry);
    const found = this.walk(this.root, values, 0);
    memo.remember(set, values, found);
    return found;
  }

  private walk(node: Node<T>, values: readonly (string | null)[], depth: number): T | undefined {
    if (depth === ATTRIBUTE_COUNT) return node.value;
    const v = values[depth];
    if (v !== null && node.exact) {
      const exact = node.exact[v];
      if (exact) {
        const hit = this.walk(exact, values, depth + 1);
        if (hit !== undefined) return hit;
      }
    }
    return node.wild ? this.walk(node.wild, values, depth + 1) : undefined;
  }
}
