import { type KubeObject, keyOf } from './object.js';

/** The values an object is indexed under (an object may be under several, or none). */
export type IndexFunc<T> = (object: T) => readonly string[];

export type Indexers<T> = Readonly<Record<string, IndexFunc<T>>>;

/** Index of objects by `metadata.namespace`; every informer has it. */
export const NAMESPACE_INDEX = 'namespace';
/** Index of objects by the `uid` of each of their owner references; every informer has it. */
export const OWNER_UID_INDEX = 'byOwnerUID';

export function indexByNamespace(object: KubeObject): readonly string[] {
  return object.metadata.namespace ? [object.metadata.namespace] : [];
}

export function indexByOwnerUID(object: KubeObject): readonly string[] {
  return (object.metadata.ownerReferences ?? []).map((ref) => ref.uid);
}

/**
 * Objects keyed `namespace/name` plus secondary indexes (client-go's `ThreadSafeStore` + `Indexer`). Index entries are
 * maintained on every write, so an index lookup costs the size of its answer, not a scan of the store.
 */
export class Store<T extends KubeObject> {
  private readonly objects = new Map<string, T>();
  private readonly indexers = new Map<string, IndexFunc<T>>();
  /**
   * index name → index value → keys. A value most objects have alone (an owner's uid, an address) holds its one key
   * as a plain string: a Set per object would cost ~150 bytes each; it becomes a Set once a second key joins.
   */
  private readonly indices = new Map<string, Map<string, IndexBucket>>();

  constructor(indexers: Indexers<T> = {}) {
    this.addIndexers(indexers);
  }

  get size(): number {
    return this.objects.size;
  }

  get(key: string): T | undefined {
    return this.objects.get(key);
  }

  list(): T[] {
    return [...this.objects.values()];
  }

  keys(): string[] {
    return [...this.objects.keys()];
  }

  indexNames(): string[] {
    return [...this.indexers.keys()];
  }

  /** Objects indexed under `value` in `indexName`; throws for an index that does not exist (a programming error). */
  byIndex(indexName: string, value: string): T[] {
    return this.indexKeys(indexName, value).map((key) => this.objects.get(key) as T);
  }

  indexKeys(indexName: string, value: string): string[] {
    const index = this.indices.get(indexName);
    if (!index) throw new Error(`store has no index "${indexName}" (indexes: ${this.indexNames().join(', ')})`);
    const bucket = index.get(value);
    if (bucket === undefined) return [];
    return typeof bucket === 'string' ? [bucket] : [...bucket];
  }

  /**
   * Adds indexes, computing them over the objects already stored. Re-adding a name with the same function is a
   * no-op; with a different function it is an error, because two callers would disagree on what the index means.
   */
  addIndexers(indexers: Indexers<T>): void {
    for (const [name, indexFunc] of Object.entries(indexers)) {
      const existing = this.indexers.get(name);
      if (existing === indexFunc) continue;
      if (existing) throw new Error(`index "${name}" already exists with a different index function`);
      this.indexers.set(name, indexFunc);
      const index = new Map<string, IndexBucket>();
      this.indices.set(name, index);
      for (const [key, object] of this.objects) addToIndex(index, indexFunc(object), key);
    }
  }

  /** Inserts or replaces the object; returns the previous one. */
  upsert(object: T): T | undefined {
    const key = keyOf(object);
    const previous = this.objects.get(key);
    if (previous) this.unindex(previous, key);
    this.objects.set(key, object);
    this.index(object, key);
    return previous;
  }

  /** Removes the object stored under `key`; returns it. */
  remove(key: string): T | undefined {
    const previous = this.objects.get(key);
    if (!previous) return undefined;
    this.unindex(previous, key);
    this.objects.delete(key);
    return previous;
  }

  private index(object: T, key: string): void {
    for (const [name, indexFunc] of this.indexers) {
      addToIndex(this.indices.get(name) as Map<string, IndexBucket>, indexFunc(object), key);
    }
  }

  private unindex(object: T, key: string): void {
    for (const [name, indexFunc] of this.indexers) {
      const index = this.indices.get(name) as Map<string, IndexBucket>;
      for (const value of indexFunc(object)) {
        const keys = index.get(value);
        if (keys === undefined) continue;
        if (typeof keys === 'string') {
          if (keys === key) index.delete(value);
          continue;
        }
        keys.delete(key);
        if (keys.size === 0) index.delete(value);
      }
    }
  }
}

/** The keys under one index value: one key alone, or a Set once there are more. */
type IndexBucket = string | Set<string>;

function addToIndex(index: Map<string, IndexBucket>, values: readonly string[], key: string): void {
  for (const value of values) {
    const keys = index.get(value);
    if (keys === undefined || keys === key) index.set(value, key);
    else if (typeof keys === 'string') index.set(value, new Set([keys, key]));
    else keys.add(key);
  }
}
