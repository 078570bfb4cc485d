import type { KubeObject } from './object.js';

/**
 * Annotations no controller of this kit reads that can be as large as the object itself: `kubectl apply` stores the
 * whole applied manifest in the first.
 */
export const DROPPED_ANNOTATIONS: readonly string[] = ['kubectl.kubernetes.io/last-applied-configuration'];

/**
 * String values worth sharing between cached objects: the same few values repeat in every object of a kind (API
 * versions, kinds, namespaces, pool names, finalizers, condition types and reasons, timestamps of one burst). Values
 * under these keys are unique per object and are never looked up: interning them would only fill the table.
 */
const UNIQUE_VALUE_KEYS = new Set(['uid', 'name', 'resourceVersion', 'message', 'address', 'key', 'generateName']);
/** Under these parents even `name` and `uid` repeat (the pool every IPAddress of a pool points at). */
const SHARED_VALUE_PARENTS = new Set(['poolRef', 'ownerReferences', 'labels', 'annotations', 'finalizers']);
/**
 * Small parts that are the same in many objects (the pool reference of every claim and IPAddress of a pool, the
 * pool's owner reference on each IPAddress, the finalizer list): one frozen copy serves them all. Only parts whose
 * values are all primitives are shared, and frozen, so a reconciler that mutated a cached object would fail loudly
 * instead of changing every object that shares the part.
 */
const SHARED_PART_KEYS = new Set(['poolRef', 'ownerReferences', 'finalizers']);
/** Longer strings are rarely repeated vocabulary; comparing them costs more than sharing saves. */
const MAX_INTERNED_LENGTH = 96;

/**
 * One copy of each repeated string (JSON.parse allocates a fresh copy of every value, 40–60 bytes apiece). Bounded:
 * past `maxEntries` the table starts over, which costs only the sharing of strings seen before the reset (objects
 * keep the copies they hold), never memory.
 */
export class StringInterner {
  private table = new Map<string, string>();
  private parts: PartNode = newPartNode();
  private partNodes = 0;
  private partCount = 0;
  private added = 0;

  constructor(private readonly maxEntries = 16_384) {}

  intern(value: string): string {
    const shared = this.table.get(value);
    if (shared !== undefined) return shared;
    if (this.table.size >= this.maxEntries) this.table = new Map();
    this.table.set(value, value);
    this.added += 1;
    return value;
  }

  /**
   * How many strings the table has taken in since it was made (resets do not lower it): a part built while this
   * grew holds a value never seen before, so it cannot equal a part seen before.
   */
  get insertions(): number {
    return this.added;
  }

  /**
   * One frozen copy of each distinct part made of primitives only (the same bound and reset as the strings, counted
   * in tree nodes; a part longer than the bound is never shared). Parts are found by walking a tree keyed by the
   * part's keys and values in turn: the values are interned strings and the keys JSON.parse's internalized ones,
   * whose hashes V8 keeps, so a lookup builds no text. Map keys compare by SameValueZero, so `"1"`, `1` and `true`
   * stay apart (callers never share a -0).
   */
  share<P extends object>(part: P): P {
    const entries = Array.isArray(part) ? undefined : Object.entries(part);
    const steps = entries === undefined ? 2 + (part as unknown[]).length : 1 + 2 * entries.length;
    if (steps > this.maxEntries) return part;
    if (this.partNodes + steps > this.maxEntries) {
      this.parts = newPartNode();
      this.partNodes = 0;
      this.partCount = 0;
    }
    let node = this.parts;
    if (entries === undefined) {
      node = this.step(node, ARRAY_PART);
      node = this.step(node, (part as unknown[]).length);
      for (const value of part as unknown[]) node = this.step(node, value);
    } else {
      node = this.step(node, OBJECT_PART);
      for (const [key, value] of entries) node = this.step(this.step(node, key), value);
    }
    if (node.part !== undefined) return node.part as P;
    node.part = Object.freeze(part);
    this.partCount += 1;
    return part;
  }

  private step(node: PartNode, key: unknown): PartNode {
    let next = node.next.get(key);
    if (next === undefined) {
      next = newPartNode();
      node.next.set(key, next);
      this.partNodes += 1;
    }
    return next;
  }

  get size(): number {
    return this.table.size + this.partCount;
  }
}

/** A node of the tree of shared parts: the part that ends here, if any, and the steps onward. */
interface PartNode {
  readonly next: Map<unknown, PartNode>;
  part?: object;
}

const ARRAY_PART = Symbol('array');
const OBJECT_PART = Symbol('object');

function newPartNode(): PartNode {
  return { next: new Map() };
}

/** The interner every cache shares unless given its own: vocabulary is the same across resources. */
const sharedInterner = new StringInterner();

/**
 * The cache's default transform (controller-runtime's `TransformStripManagedFields`, and more): a copy of the object
 * with `metadata.managedFields` and the annotations in `DROPPED_ANNOTATIONS` left out, `undefined` properties dropped,
 * and repeated strings shared. Every other field is kept as it came, so a reconciler reads exactly what the API server
 * sent. The copy is built fresh, so each object's parts are plain objects with few properties, stored in-object.
 */
export function compactObject<T extends KubeObject>(object: T, interner: StringInterner = sharedInterner): T {
  return compactValue(object, '', '', interner, true) as T;
}

/**
 * `compactObject` without the copy, for an object just decoded from JSON that nobody else holds (the reflector's
 * items and watch events, validated where they entered): the same result, made by writing shared strings and parts
 * over the object's own values. JSON.parse already built each part with exactly its properties inside, which is what
 * the copy exists to give objects built one property at a time (zod's output); a metadata that carries something
 * compaction drops is still built anew. Only for plain JSON values: no `undefined`, no prototypes but Object's.
 */
export function compactDecoded<T extends KubeObject>(object: T, interner: StringInterner = sharedInterner): T {
  return compactInPlace(object, '', '', interner, true) as T;
}

function compactInPlace(value: unknown, key: string, parent: string, interner: StringInterner, top: boolean): unknown {
  if (typeof value === 'string') return internedValue(value, key, parent, interner);
  if (value === null || typeof value !== 'object') return value;
  const insertionsBefore = interner.insertions;
  let primitives = true;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index += 1) {
      const child: unknown = value[index];
      if (!isPrimitive(child)) primitives = false;
      value[index] = compactInPlace(child, key, key, interner, false);
    }
  } else {
    const object = value as Record<string, unknown>;
    for (const childKey in object) {
      const child = object[childKey];
      if (!isPrimitive(child)) primitives = false;
      const compacted =
        top && childKey === 'metadata' && carriesDropped(child)
          ? compactMetadata(child as Record<string, unknown>, interner)
          : compactInPlace(child, childKey, key, interner, false);
      // Written back even when equal: an interned string is `===` to the copy it replaces, yet another string.
      // An own `__proto__` key (JSON may carry one) is a property: assigning it would set the prototype instead.
      if (childKey === '__proto__') {
        Object.defineProperty(object, childKey, {
          value: compacted,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      } else object[childKey] = compacted;
    }
  }
  return SHARED_PART_KEYS.has(key) && primitives && interner.insertions === insertionsBefore
    ? interner.share(value)
    : value;
}

/** Whether a metadata holds what compaction leaves out (managedFields, a dropped annotation). */
function carriesDropped(metadata: unknown): boolean {
  if (metadata === null || typeof metadata !== 'object') return false;
  if (Object.hasOwn(metadata, 'managedFields')) return true;
  const annotations = (metadata as Record<string, unknown>).annotations;
  return (
    annotations !== null &&
    typeof annotations === 'object' &&
    DROPPED_ANNOTATIONS.some((name) => Object.hasOwn(annotations, name))
  );
}

/** A string value as the cache keeps it: vocabulary shared, values unique to one object as they are. */
function internedValue(value: string, key: string, parent: string, interner: StringInterner): string {
  if (value.length > MAX_INTERNED_LENGTH) return value;
  if (UNIQUE_VALUE_KEYS.has(key) && !SHARED_VALUE_PARENTS.has(parent)) return value;
  return interner.intern(value);
}

function compactValue(value: unknown, key: string, parent: string, interner: StringInterner, top: boolean): unknown {
  if (typeof value === 'string') return internedValue(value, key, parent, interner);
  if (value === null || typeof value !== 'object') return value;
  const insertionsBefore = interner.insertions;
  if (Array.isArray(value)) {
    const copy = new Array<unknown>(value.length);
    for (let index = 0; index < value.length; index += 1) {
      // Elements are judged by the array's key: the items of `finalizers` are vocabulary, `ownerReferences` items
      // are objects whose fields see `ownerReferences` as their parent.
      copy[index] = compactValue(value[index], key, key, interner, false);
    }
    return worthSharing(key, copy, interner, insertionsBefore) ? interner.share(copy) : copy;
  }
  const keys: string[] = [];
  const values: unknown[] = [];
  for (const childKey in value) {
    if (!Object.hasOwn(value, childKey)) continue;
    const child = (value as Record<string, unknown>)[childKey];
    if (child === undefined) continue;
    keys.push(childKey);
    values.push(
      top && childKey === 'metadata'
        ? compactMetadata(child as Record<string, unknown>, interner)
        : compactValue(child, childKey, key, interner, false),
    );
  }
  const copy = shapedObject(keys, values);
  return worthSharing(key, values, interner, insertionsBefore) ? interner.share(copy) : copy;
}

/**
 * Whether a part is looked up among the shared ones: it sits under a shared key, holds only primitives, and none of
 * its strings was new to the interner. A part with a new string (an owner reference to one claim, by its uid) is
 * unique, and looking it up would cost a walk and new tree nodes for nothing; a part is shared from its second
 * sighting on.
 */
function worthSharing(
  key: string,
  values: readonly unknown[],
  interner: StringInterner,
  insertionsBefore: number,
): boolean {
  return SHARED_PART_KEYS.has(key) && interner.insertions === insertionsBefore && values.every(isPrimitive);
}

/** A value a shared part may hold: a primitive whose JSON text names it exactly (not -0, which JSON prints as 0). */
function isPrimitive(value: unknown): boolean {
  return value === null || (typeof value !== 'object' && !Object.is(value, -0));
}

function compactMetadata(metadata: Record<string, unknown>, interner: StringInterner): Record<string, unknown> {
  const keys: string[] = [];
  const values: unknown[] = [];
  for (const key in metadata) {
    if (!Object.hasOwn(metadata, key)) continue;
    const value = metadata[key];
    if (value === undefined || key === 'managedFields') continue;
    if (key === 'annotations' && value !== null && typeof value === 'object') {
      const all = Object.keys(value);
      const kept = all.filter((name) => !DROPPED_ANNOTATIONS.includes(name));
      if (kept.length < all.length) {
        // Annotations that held only dropped ones go away whole, as if the object never had any.
        if (kept.length === 0) continue;
        const annotations = value as Record<string, unknown>;
        keys.push(key);
        values.push(
          compactValue(
            Object.fromEntries(kept.map((name) => [name, annotations[name]])),
            key,
            'metadata',
            interner,
            false,
          ),
        );
        continue;
      }
    }
    keys.push(key);
    values.push(compactValue(value, key, 'metadata', interner, false));
  }
  return shapedObject(keys, values);
}

/**
 * Objects built one property at a time (`{}` then assignments, as zod builds its output) keep only four properties
 * inside the object and spill the rest into a separate array; an object cloned by spread from one JSON.parse made
 * has exactly its properties inside. So each distinct list of keys gets a template object, parsed once, and every
 * copy of that shape is a spread of its template with the values written over (the shape and its field layout are
 * shared by all objects of a kind). Templates are bounded; past the bound, new shapes are built the plain way.
 */
interface TemplateNode {
  readonly next: Map<string, TemplateNode>;
  template?: Readonly<Record<string, null>>;
}
/** Templates by their keys in order, one tree step per key (JSON.parse's keys are internalized: no text is built). */
const templates: TemplateNode = { next: new Map() };
let templateNodes = 0;
const MAX_TEMPLATE_NODES = 16_384;
/** Objects this small fit the four in-object properties of `{}` anyway. */
const MIN_TEMPLATED_KEYS = 5;

function templateFor(keys: readonly string[]): Readonly<Record<string, null>> | undefined {
  let node = templates;
  for (const key of keys) {
    let next = node.next.get(key);
    if (next === undefined) {
      // Past the bound, shapes not seen yet are built the plain way.
      if (templateNodes >= MAX_TEMPLATE_NODES) return undefined;
      next = { next: new Map() };
      node.next.set(key, next);
      templateNodes += 1;
    }
    node = next;
  }
  // Made by JSON.parse, so it has exactly its properties inside; a spread of it keeps that layout (and its
  // `__proto__` key, if any, as a plain property). Spreading is ~30 % cheaper per object than parsing the text.
  node.template ??= JSON.parse(JSON.stringify(Object.fromEntries(keys.map((key) => [key, null])))) as Record<
    string,
    null
  >;
  return node.template;
}

function shapedObject(keys: readonly string[], values: readonly unknown[]): Record<string, unknown> {
  let copy: Record<string, unknown> | undefined;
  if (keys.length >= MIN_TEMPLATED_KEYS) {
    const template = templateFor(keys);
    if (template !== undefined) copy = { ...template };
  }
  copy ??= {};
  for (let index = 0; index < keys.length; index += 1) {
    const key = keys[index] as string;
    // JSON may carry a key named `__proto__`; assigning it would set the prototype instead of a property.
    if (key === '__proto__') {
      Object.defineProperty(copy, key, { value: values[index], enumerable: true, writable: true, configurable: true });
    } else copy[key] = values[index];
  }
  return copy;
}
