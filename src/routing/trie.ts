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
 *
 * A node with one exact child keeps it in two fields instead (`soleKey`, `sole`): such a
 * dictionary is a hash table of ~175 bytes for one entry, and rules of six attributes make one
 * at nearly every node below the first few levels (at 100,000 of them, 140,000 dictionaries,
 * ~24 MB of the front thread's heap). The second child turns the pair into a dictionary.
 *
 * A rule's trailing wildcards are not stored as a chain of nodes: where everything below a node
 * would be `*` down to one leaf, the node holds that leaf's value itself (a "tail"). Onboarded
 * rules have three attributes, so each ended in three wildcard nodes: at 100,000 rules those
 * were 300,000 objects, ~14 MB of the heap. A tail matches whatever the transaction holds at
 * the remaining positions, as the chain did, and it is opened one level down when another rule
 * needs to pass through its node. `totalNodes` still counts the chain's nodes (spec 2.8's
 * `trie.total_nodes` is the number of nodes of the trie over the six attributes).
 */
import { ATTRIBUTE_COUNT, WILDCARD } from './attributes.js';
import { MatchMemo, MAX_MEMO_ENTRIES, MEMO_ENTRIES, MISS } from './match-memo.js';

type Children<T> = Record<string, Node<T> | undefined>;

interface Node<T> {
  /** Two or more exact children; null while there are none or one (then it is `sole`). */
  exact: Children<T> | null;
  /** The one exact child's key and the child, while there is exactly one. */
  soleKey: string | null;
  sole: Node<T> | null;
  wild: Node<T> | null;
  /**
   * At depth 6, the rule stored there. Above it, a tail: the value of the one rule below, whose
   * attributes from here on are all `*`; such a node has no children.
   */
  value: T | undefined;
}

function newNode<T>(): Node<T> {
  return { exact: null, soleKey: null, sole: null, wild: null, value: undefined };
}

/** The exact child under `key`, if any. */
function exactChild<T>(node: Node<T>, key: string): Node<T> | undefined {
  if (node.soleKey === key) return node.sole!;
  return node.exact === null ? undefined : node.exact[key];
}

/** Adds an exact child under a key the node does not have yet. */
function addExactChild<T>(node: Node<T>, key: string, child: Node<T>): void {
  if (node.exact !== null) {
    node.exact[key] = child;
  } else if (node.sole === null) {
    node.soleKey = key;
    node.sole = child;
  } else {
    const exact = newChildren<T>();
    exact[node.soleKey!] = node.sole;
    exact[key] = child;
    node.exact = exact;
    node.soleKey = null;
    node.sole = null;
  }
}

/** Removes the exact child under `key` (which the node has). */
function removeExactChild<T>(node: Node<T>, key: string): void {
  if (node.soleKey === key) {
    node.soleKey = null;
    node.sole = null;
  } else {
    delete node.exact![key];
  }
}

function newChildren<T>(): Children<T> {
  return Object.create(null) as Children<T>;
}

function isEmpty<T>(children: Children<T> | null): boolean {
  for (const _ in children) return false;
  return true;
}

/** Whether attrs[from..5] are all `*`. */
function wildFrom(attrs: readonly string[], from: number): boolean {
  for (let i = from; i < ATTRIBUTE_COUNT; i++) if (attrs[i] !== WILDCARD) return false;
  return true;
}

/** A node with no children and no value: one a new rule may end at as a tail. */
function isBare<T>(node: Node<T>): boolean {
  return node.value === undefined && node.wild === null && node.sole === null && isEmpty(node.exact);
}

/**
 * `T`: what the trie holds per rule. `A`: what match() answers for it, made by `answerOf` when
 * the memo first remembers a tuple that finds it (the tenants' trie answers a rule's route
 * cache, routing/rule-cache.ts, so a route reads nothing of the rule itself); by default the
 * value itself.
 */
export class RuleTrie<T, A = T> {
  private readonly root: Node<T> = newNode();
  private nodes = 1;
  private rules = 0;
  /** Recent answers of match(); dropped on every change (match-memo.ts). */
  private memo: MatchMemo<A> | null = null;
  /** Entries of the next memo: doubled, up to MAX_MEMO_ENTRIES, each time one is outgrown; kept across changes. */
  private memoEntries = MEMO_ENTRIES;

  constructor(private readonly answerOf: (value: T) => A = (value) => value as unknown as A) {}

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
      if (node.value !== undefined) {
        // A tail: the same key is taken; another one opens it a level down and passes.
        if (wildFrom(attrs, i)) return false;
        node.wild = newNode();
        node.wild.value = node.value;
        node.value = undefined;
      } else if (wildFrom(attrs, i) && isBare(node)) {
        return this.placed(node, value, ATTRIBUTE_COUNT - i);
      }
      const a = attrs[i];
      let next: Node<T> | null | undefined;
      if (a === WILDCARD) {
        next = node.wild;
        if (!next) {
          next = node.wild = newNode();
          this.nodes++;
        }
      } else {
        next = exactChild(node, a);
        if (!next) {
          next = newNode();
          addExactChild(node, a, next);
          this.nodes++;
        }
      }
      node = next;
    }
    if (node.value !== undefined) return false;
    return this.placed(node, value, 0);
  }

  /** Stores `value` at `node`, a leaf or a tail standing for `chain` wildcard nodes below it. */
  private placed(node: Node<T>, value: T, chain: number): true {
    node.value = value;
    this.nodes += chain;
    this.rules++;
    this.memo = null;
    return true;
  }

  /** The value stored under exactly these attributes, if any. */
  get(attrs: readonly string[]): T | undefined {
    let node: Node<T> | null | undefined = this.root;
    for (let i = 0; i < ATTRIBUTE_COUNT && node; i++) {
      if (node.value !== undefined) return wildFrom(attrs, i) ? node.value : undefined; // a tail
      node = attrs[i] === WILDCARD ? node.wild : exactChild(node, attrs[i]);
    }
    return node?.value;
  }

  /** Removes the value under exactly these attributes, pruning empty branches. */
  remove(attrs: readonly string[]): boolean {
    const path: Node<T>[] = [this.root];
    let node: Node<T> | null | undefined = this.root;
    let depth = 0;
    while (depth < ATTRIBUTE_COUNT && node.value === undefined) {
      node = attrs[depth] === WILDCARD ? node.wild : exactChild(node, attrs[depth]);
      if (!node) return false;
      path.push(node);
      depth++;
    }
    if (node.value === undefined || !wildFrom(attrs, depth)) return false;
    node.value = undefined;
    this.nodes -= ATTRIBUTE_COUNT - depth; // a tail's chain goes with it
    this.rules--;
    this.memo = null;
    for (let i = depth; i > 0; i--) {
      const child = path[i];
      if (!isBare(child)) break;
      const parent = path[i - 1];
      if (attrs[i - 1] === WILDCARD) parent.wild = null;
      else removeExactChild(parent, attrs[i - 1]);
      this.nodes--;
    }
    return true;
  }

  /**
   * Most specific match for a transaction. `values[i]` is the transaction's value at
   * position i (normalized), or null when it has none (then only `*` matches there).
   */
  match(values: readonly (string | null)[]): A | undefined {
    const memo = (this.memo ??= new MatchMemo<A>(this.memoEntries));
    const set = memo.setOf(values);
    const entry = memo.find(set, values);
    if (entry !== MISS) return memo.answerAt(entry);
    const value = this.walk(this.root, values, 0);
    const found = value === undefined ? undefined : this.answerOf(value);
    memo.remember(set, values, found);
    if (memo.outgrown && this.memoEntries < MAX_MEMO_ENTRIES) {
      this.memoEntries *= 2;
      this.memo = null; // the next match makes the larger one
    }
    return found;
  }

  private walk(node: Node<T>, values: readonly (string | null)[], depth: number): T | undefined {
    // A leaf, or a tail: `*` down to the leaf matches whatever the transaction holds there.
    if (depth === ATTRIBUTE_COUNT || node.value !== undefined) return node.value;
    const v = values[depth];
    if (v !== null) {
      const exact = exactChild(node, v);
      if (exact) {
        const hit = this.walk(exact, values, depth + 1);
        if (hit !== undefined) return hit;
      }
    }
    return node.wild ? this.walk(node.wild, values, depth + 1) : undefined;
  }
}
