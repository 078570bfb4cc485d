interface Entry<T> {
  readyAt: number;
  readonly item: T;
  /** Insertion order breaks ties, so items due at the same time come out first-in first-out. */
  readonly sequence: number;
}

/**
 * Items waiting for a time, earliest first, at most one entry per item: adding an item that already waits keeps the
 * earlier of the two times (client-go's delaying queue does the same, so a requeueAfter never postpones a retry).
 */
export class DelayHeap<T> {
  private readonly heap: Entry<T>[] = [];
  private readonly entries = new Map<T, Entry<T>>();
  private sequence = 0;

  get size(): number {
    return this.heap.length;
  }

  /** Returns true when the earliest time changed (the caller re-arms its timer). */
  schedule(item: T, readyAt: number): boolean {
    const before = this.peekTime();
    const existing = this.entries.get(item);
    if (existing) {
      if (readyAt >= existing.readyAt) return false;
      existing.readyAt = readyAt;
      this.siftUp(this.heap.indexOf(existing));
    } else {
      const entry: Entry<T> = { readyAt, item, sequence: this.sequence++ };
      this.entries.set(item, entry);
      this.heap.push(entry);
      this.siftUp(this.heap.length - 1);
    }
    return this.peekTime() !== before;
  }

  peekTime(): number | undefined {
    return this.heap[0]?.readyAt;
  }

  /** Removes and returns every item due at or before `now`, earliest first. */
  popReady(now: number): T[] {
    const ready: T[] = [];
    while (this.heap.length > 0 && (this.heap[0] as Entry<T>).readyAt <= now) {
      const top = this.heap[0] as Entry<T>;
      const last = this.heap.pop() as Entry<T>;
      if (this.heap.length > 0) {
        this.heap[0] = last;
        this.siftDown(0);
      }
      this.entries.delete(top.item);
      ready.push(top.item);
    }
    return ready;
  }

  clear(): void {
    this.heap.length = 0;
    this.entries.clear();
  }

  private less(a: Entry<T>, b: Entry<T>): boolean {
    return a.readyAt < b.readyAt || (a.readyAt === b.readyAt && a.sequence < b.sequence);
  }

  private siftUp(index: number): void {
    let child = index;
    while (child > 0) {
      const parent = (child - 1) >> 1;
      if (!this.less(this.heap[child] as Entry<T>, this.heap[parent] as Entry<T>)) return;
      this.swap(child, parent);
      child = parent;
    }
  }

  private siftDown(index: number): void {
    let parent = index;
    for (;;) {
      const left = parent * 2 + 1;
      const right = left + 1;
      let smallest = parent;
      if (left < this.heap.length && this.less(this.heap[left] as Entry<T>, this.heap[smallest] as Entry<T>)) {
        smallest = left;
      }
      if (right < this.heap.length && this.less(this.heap[right] as Entry<T>, this.heap[smallest] as Entry<T>)) {
        smallest = right;
      }
      if (smallest === parent) return;
      this.swap(parent, smallest);
      parent = smallest;
    }
  }

  private swap(a: number, b: number): void {
    const entry = this.heap[a] as Entry<T>;
    this.heap[a] = this.heap[b] as Entry<T>;
    this.heap[b] = entry;
  }
}
