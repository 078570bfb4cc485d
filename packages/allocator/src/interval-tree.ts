/**
 * A mutable ordered set of bigints, stored as disjoint, non-adjacent inclusive intervals in a treap.
 *
 * The allocator keeps its FREE values here: the lowest free value is the leftmost interval, allocating shrinks or
 * splits one interval, releasing re-inserts a value and merges it with its neighbours. Every node also knows how
 * many values its subtree holds, which gives rank/select for uniform random choice. All operations are
 * O(log n) expected for n intervals, independent of how many values the intervals span.
 *
 * The treap's priorities only shape the tree; they come from a fixed-seed generator so that runs are reproducible,
 * and no result depends on them.
 */
import type { Interval } from './interval-set.js';

interface TreeNode {
  first: bigint;
  last: bigint;
  readonly priority: number;
  left: TreeNode | undefined;
  right: TreeNode | undefined;
  /** Number of values in this subtree. */
  total: bigint;
}

function totalOf(node: TreeNode | undefined): bigint {
  return node === undefined ? 0n : node.total;
}

function refresh(node: TreeNode): TreeNode {
  node.total = totalOf(node.left) + totalOf(node.right) + (node.last - node.first + 1n);
  return node;
}

/** Splits into (nodes whose first < key, nodes whose first ≥ key). */
function split(node: TreeNode | undefined, key: bigint): [TreeNode | undefined, TreeNode | undefined] {
  if (node === undefined) return [undefined, undefined];
  if (node.first < key) {
    const [less, rest] = split(node.right, key);
    node.right = less;
    return [refresh(node), rest];
  }
  const [less, rest] = split(node.left, key);
  node.left = rest;
  return [less, refresh(node)];
}

/** Joins two treaps where every value of `low` is below every value of `high`. */
function merge(low: TreeNode | undefined, high: TreeNode | undefined): TreeNode | undefined {
  if (low === undefined) return high;
  if (high === undefined) return low;
  if (low.priority > high.priority) {
    low.right = merge(low.right, high);
    return refresh(low);
  }
  high.left = merge(low, high.left);
  return refresh(high);
}

function leftmost(node: TreeNode | undefined): TreeNode | undefined {
  let current = node;
  while (current?.left !== undefined) current = current.left;
  return current;
}

function rightmost(node: TreeNode | undefined): TreeNode | undefined {
  let current = node;
  while (current?.right !== undefined) current = current.right;
  return current;
}

function withoutLeftmost(node: TreeNode): TreeNode | undefined {
  if (node.left === undefined) return node.right;
  node.left = withoutLeftmost(node.left);
  return refresh(node);
}

function withoutRightmost(node: TreeNode): TreeNode | undefined {
  if (node.right === undefined) return node.left;
  node.right = withoutRightmost(node.right);
  return refresh(node);
}

/** Removes the lowest value, dropping the leftmost node when it held only that value. */
/** Removing one value lowers every ancestor's total by exactly one; cheaper than re-summing children. */
function lessOne(node: TreeNode): TreeNode {
  node.total -= 1n;
  return node;
}

function withoutLowestValue(node: TreeNode): TreeNode | undefined {
  if (node.left !== undefined) {
    node.left = withoutLowestValue(node.left);
    return lessOne(node);
  }
  if (node.first === node.last) return node.right;
  node.first += 1n;
  return lessOne(node);
}

function rotateRight(node: TreeNode): TreeNode {
  const pivot = node.left!;
  node.left = pivot.right;
  pivot.right = refresh(node);
  return refresh(pivot);
}

function rotateLeft(node: TreeNode): TreeNode {
  const pivot = node.right!;
  node.right = pivot.left;
  pivot.left = refresh(node);
  return refresh(pivot);
}

export class IntervalTree {
  private root: TreeNode | undefined;
  private nodeCount = 0;
  private seed = 0x2545f491;

  /** Builds from sorted intervals in O(n); adjacent intervals are merged, overlapping or unsorted ones rejected. */
  static fromSorted(intervals: Iterable<Interval>): IntervalTree {
    const tree = new IntervalTree();
    // The right spine of the treap built so far; a new node pops lower-priority nodes and adopts them as its left.
    const spine: TreeNode[] = [];
    let previous: TreeNode | undefined;
    for (const { first, last } of intervals) {
      if (first > last) throw new RangeError(`interval ${first}-${last} has first > last`);
      if (previous !== undefined && first <= previous.last) {
        throw new RangeError(`intervals are not sorted and disjoint: ${first} follows ${previous.last}`);
      }
      if (previous !== undefined && first === previous.last + 1n) {
        previous.last = last;
        continue;
      }
      const node = tree.createNode(first, last);
      let adopted: TreeNode | undefined;
      while (spine.length > 0 && spine[spine.length - 1]!.priority < node.priority) adopted = spine.pop();
      node.left = adopted;
      const parent = spine[spine.length - 1];
      if (parent !== undefined) parent.right = node;
      spine.push(node);
      previous = node;
    }
    tree.root = spine[0];
    if (tree.root !== undefined) refreshAll(tree.root);
    return tree;
  }

  private createNode(first: bigint, last: bigint): TreeNode {
    // xorshift32: cheap, deterministic, good enough to balance a treap.
    let x = this.seed;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.seed = x >>> 0;
    this.nodeCount += 1;
    return { first, last, priority: this.seed, left: undefined, right: undefined, total: last - first + 1n };
  }

  /** Number of values held. */
  get size(): bigint {
    return totalOf(this.root);
  }

  /** Number of disjoint intervals held. */
  get intervalCount(): number {
    return this.nodeCount;
  }

  get min(): bigint | undefined {
    return leftmost(this.root)?.first;
  }

  contains(value: bigint): boolean {
    let node = this.root;
    while (node !== undefined) {
      if (value < node.first) node = node.left;
      else if (value > node.last) node = node.right;
      else return true;
    }
    return false;
  }

  /** The value with `offset` smaller values in the set (0-based rank), or undefined past the end. */
  select(offset: bigint): bigint | undefined {
    let remaining = offset;
    let node = this.root;
    while (node !== undefined) {
      const leftTotal = totalOf(node.left);
      if (remaining < leftTotal) {
        node = node.left;
        continue;
      }
      remaining -= leftTotal;
      const width = node.last - node.first + 1n;
      if (remaining < width) return node.first + remaining;
      remaining -= width;
      node = node.right;
    }
    return undefined;
  }

  /** Removes and returns the lowest value. */
  takeMin(): bigint | undefined {
    const node = leftmost(this.root);
    if (node === undefined || this.root === undefined) return undefined;
    const value = node.first;
    if (node.first === node.last) this.nodeCount -= 1;
    this.root = withoutLowestValue(this.root);
    return value;
  }

  /** Adds [first, last], which must not overlap the set; merges with adjacent intervals. */
  add(first: bigint, last: bigint = first): void {
    if (first > last) throw new RangeError(`interval ${first}-${last} has first > last`);
    let [low, high] = split(this.root, first);
    const predecessor = rightmost(low);
    const successor = leftmost(high);
    if (
      (predecessor !== undefined && predecessor.last >= first) ||
      (successor !== undefined && successor.first <= last)
    ) {
      this.root = merge(low, high);
      throw new RangeError(`interval ${first}-${last} overlaps values already in the set`);
    }
    let mergedFirst = first;
    let mergedLast = last;
    if (predecessor !== undefined && low !== undefined && predecessor.last + 1n === first) {
      mergedFirst = predecessor.first;
      low = withoutRightmost(low);
      this.nodeCount -= 1;
    }
    if (successor !== undefined && high !== undefined && successor.first === last + 1n) {
      mergedLast = successor.last;
      high = withoutLeftmost(high);
      this.nodeCount -= 1;
    }
    this.root = merge(merge(low, this.createNode(mergedFirst, mergedLast)), high);
  }

  /** Removes [first, last], which must lie inside one interval of the set; returns false (and changes nothing) if not. */
  remove(first: bigint, last: bigint = first): boolean {
    if (first === last) return this.removeValue(first);
    const [atOrBelow, above] = split(this.root, first + 1n);
    const holder = rightmost(atOrBelow);
    if (holder === undefined || atOrBelow === undefined || holder.last < last) {
      this.root = merge(atOrBelow, above);
      return false;
    }
    let rest = withoutRightmost(atOrBelow);
    this.nodeCount -= 1;
    if (holder.first < first) rest = merge(rest, this.createNode(holder.first, first - 1n));
    let tail = above;
    if (last < holder.last) tail = merge(this.createNode(last + 1n, holder.last), tail);
    this.root = merge(rest, tail);
    return true;
  }

  private removeValue(value: bigint): boolean {
    const root = this.withoutValue(this.root, value);
    if (root === null) return false;
    this.root = root;
    return true;
  }

  /**
   * Removes one value in place, descending once (the hot path of allocateSpecific and markAllocated): a
   * point node is dropped, an edge value shrinks its node, an inner value splits its node in two. Returns the new
   * subtree root, or `null` when the value is not in the set (nothing changed).
   */
  private withoutValue(node: TreeNode | undefined, value: bigint): TreeNode | undefined | null {
    if (node === undefined) return null;
    if (value < node.first) {
      const left = this.withoutValue(node.left, value);
      if (left === null) return null;
      node.left = left;
      return left !== undefined && left.priority > node.priority ? rotateRight(node) : lessOne(node);
    }
    if (value > node.last) {
      const right = this.withoutValue(node.right, value);
      if (right === null) return null;
      node.right = right;
      return right !== undefined && right.priority > node.priority ? rotateLeft(node) : lessOne(node);
    }
    return this.withoutValueInNode(node, value);
  }

  /** Removes `value`, which lies inside `node`, and returns the subtree's new root. */
  private withoutValueInNode(node: TreeNode, value: bigint): TreeNode | undefined {
    if (node.first === node.last) {
      this.nodeCount -= 1;
      return merge(node.left, node.right);
    }
    if (value === node.first) {
      node.first += 1n;
    } else if (value === node.last) {
      node.last -= 1n;
    } else {
      // The upper part is below everything in the right subtree, so it joins as that subtree's minimum.
      const upper = this.createNode(value + 1n, node.last);
      node.last = value - 1n;
      node.right = merge(upper, node.right);
      if (node.right !== undefined && node.right.priority > node.priority) return rotateLeft(node);
    }
    return lessOne(node);
  }

  /** Removes and returns the value of rank `offset` (0-based) in one descent; undefined past the end. */
  takeAt(offset: bigint): bigint | undefined {
    if (offset < 0n || offset >= this.size || this.root === undefined) return undefined;
    const taken: { value?: bigint } = {};
    this.root = this.withoutRank(this.root, offset, taken);
    return taken.value;
  }

  private withoutRank(node: TreeNode, offset: bigint, taken: { value?: bigint }): TreeNode | undefined {
    const leftTotal = totalOf(node.left);
    if (offset < leftTotal) {
      const left = this.withoutRank(node.left!, offset, taken);
      node.left = left;
      return left !== undefined && left.priority > node.priority ? rotateRight(node) : lessOne(node);
    }
    const inNode = offset - leftTotal;
    const width = node.last - node.first + 1n;
    if (inNode >= width) {
      const right = this.withoutRank(node.right!, inNode - width, taken);
      node.right = right;
      return right !== undefined && right.priority > node.priority ? rotateLeft(node) : lessOne(node);
    }
    taken.value = node.first + inNode;
    return this.withoutValueInNode(node, taken.value);
  }

  /** The intervals in ascending order. */
  *intervals(): Generator<Interval, void, undefined> {
    const stack: TreeNode[] = [];
    let node = this.root;
    while (node !== undefined || stack.length > 0) {
      while (node !== undefined) {
        stack.push(node);
        node = node.left;
      }
      const next = stack.pop()!;
      yield { first: next.first, last: next.last };
      node = next.right;
    }
  }
}

function refreshAll(node: TreeNode): void {
  if (node.left !== undefined) refreshAll(node.left);
  if (node.right !== undefined) refreshAll(node.right);
  refresh(node);
}
