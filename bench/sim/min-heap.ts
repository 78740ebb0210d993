/** Binary min-heap keyed by a number: the driver's queue of outcomes waiting for their latency to elapse. */
export class MinHeap<T> {
  private readonly items: Array<{ key: number; seq: number; value: T }> = [];
  /** Insertion counter: equal keys come out in insertion order, keeping runs deterministic. */
  private seq = 0;

  get size(): number {
    return this.items.length;
  }

  peekKey(): number | undefined {
    return this.items[0]?.key;
  }

  push(key: number, value: T): void {
    const items = this.items;
    items.push({ key, seq: this.seq++, value });
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) break;
      [items[i], items[parent]] = [items[parent], items[i]];
      i = parent;
    }
  }

  pop(): T | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (top === undefined || last === undefined) return undefined;
    if (items.length > 0) {
      items[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < items.length && this.less(l, m)) m = l;
        if (r < items.length && this.less(r, m)) m = r;
        if (m === i) break;
        [items[i], items[m]] = [items[m], items[i]];
        i = m;
      }
    }
    return top.value;
  }

  private less(a: number, b: number): boolean {
    const x = this.items[a];
    const y = this.items[b];
    return x.key < y.key || (x.key === y.key && x.seq < y.seq);
  }
}
