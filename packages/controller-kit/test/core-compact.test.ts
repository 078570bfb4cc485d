import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compactDecoded, compactObject, DROPPED_ANNOTATIONS, StringInterner } from '../src/cache/compact.js';
import type { KubeObject } from '../src/cache/object.js';

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/** JSON values as the API server sends them (no undefined, no managedFields): compaction must give them back whole. */
const wireValue = fc.jsonValue({ maxDepth: 4 });

const wireObject = fc
  .record({
    apiVersion: fc.constantFrom('ipam.cluster.x-k8s.io/v1beta2', 'v1'),
    kind: fc.constantFrom('IPAddressClaim', 'IPAddress', 'ConfigMap'),
    metadata: fc.record(
      {
        name: fc.string({ minLength: 1 }),
        namespace: fc.string(),
        uid: fc.uuid(),
        resourceVersion: fc.nat().map(String),
        generation: fc.nat(),
        labels: fc.dictionary(fc.string(), fc.string()),
        annotations: fc.dictionary(fc.string(), fc.string()),
        finalizers: fc.array(fc.string()),
        ownerReferences: fc.array(
          fc.record({
            apiVersion: fc.string(),
            kind: fc.string(),
            name: fc.string(),
            uid: fc.uuid(),
            controller: fc.boolean(),
          }),
        ),
        deletionTimestamp: fc.date({ noInvalidDate: true }).map((date) => date.toISOString()),
      },
      { requiredKeys: ['name'] },
    ),
    spec: wireValue,
    status: wireValue,
  })
  // As the wire gives it: plain objects from JSON.parse (a `__proto__` key is then an ordinary property).
  .map((object) => JSON.parse(JSON.stringify(object)) as KubeObject & { metadata: { annotations?: object } });

describe('compactObject', () => {
  it('gives back every field of an object that carries nothing it drops', () => {
    fc.assert(
      fc.property(wireObject, (object) => {
        const annotations = object.metadata.annotations;
        if (annotations && LAST_APPLIED in annotations) return;
        expect(compactObject(object)).toStrictEqual(object);
      }),
    );
  });

  it('drops managedFields and the last-applied annotation, keeps the other annotations, leaves the input alone', () => {
    const object = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'a',
        annotations: { [LAST_APPLIED]: '{"apiVersion":"v1"}', 'example.com/kept': 'yes' },
        managedFields: [{ manager: 'kubectl', operation: 'Apply' }],
      },
      data: { key: 'value' },
    };
    const before = structuredClone(object);
    expect(compactObject(object)).toStrictEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'a', annotations: { 'example.com/kept': 'yes' } },
      data: { key: 'value' },
    });
    expect(object).toStrictEqual(before);
    expect(DROPPED_ANNOTATIONS).toEqual([LAST_APPLIED]);
  });

  it('leaves no empty annotations behind and drops properties that are undefined', () => {
    const object = { metadata: { name: 'a', annotations: { [LAST_APPLIED]: '{}' }, uid: undefined }, spec: undefined };
    expect(compactObject(object)).toStrictEqual({ metadata: { name: 'a' } });
  });

  it('keeps a `__proto__` key as a property', () => {
    const object = JSON.parse('{"metadata":{"name":"a"},"data":{"__proto__":{"x":1},"b":2}}') as KubeObject;
    const compact = compactObject(object) as unknown as { data: object };
    expect(Object.getPrototypeOf(compact.data)).toBe(Object.prototype);
    expect(compact).toStrictEqual(object);
  });

  it('shares equal small parts from their second sighting on, without mixing up parts that only print alike', () => {
    const interner = new StringInterner();
    const claim = (name: string, poolRef: { name: string; weight: number }) =>
      compactObject({ metadata: { name }, spec: { poolRef } }, interner);
    // 'p' is new to this interner: the part cannot have been seen, so it is not looked up.
    const a = claim('a', { name: 'p', weight: 0 });
    const b = claim('b', { name: 'p', weight: -0 });
    expect(Object.is(b.spec.poolRef.weight, -0)).toBe(true);
    const c = claim('c', { name: 'p', weight: 0 });
    const d = claim('d', { name: 'p', weight: 0 });
    expect(d.spec.poolRef).toBe(c.spec.poolRef);
    expect(Object.isFrozen(d.spec.poolRef)).toBe(true);
    expect(c.spec.poolRef).not.toBe(a.spec.poolRef);
    expect(Object.isFrozen(a.spec.poolRef)).toBe(false);
    expect(b.spec.poolRef).not.toBe(c.spec.poolRef);
  });

  it('keeps no part that holds a string seen for the first time (an owner reference to one claim)', () => {
    const interner = new StringInterner();
    for (let index = 0; index < 100; index += 1) {
      const ownerReferences = [{ apiVersion: 'v1', kind: 'Claim', name: `claim-${index}`, uid: `uid-${index}` }];
      compactObject({ metadata: { name: `address-${index}`, ownerReferences } }, interner);
    }
    // 'v1', 'Claim' and each owner's name and uid; not one of the 100 unique parts.
    expect(interner.size).toBe(202);
  });

  it('keeps an annotation named like a dropped one anywhere but in metadata.annotations', () => {
    const object = { metadata: { name: 'a' }, spec: { annotations: { [LAST_APPLIED]: 'kept' }, managedFields: [1] } };
    expect(compactObject(object)).toStrictEqual(object);
  });
});

describe('StringInterner', () => {
  it('shares a part only with parts equal to it, value for value and type for type', () => {
    const primitive = fc.oneof(fc.constantFrom('1', 'a', 'true', ''), fc.constantFrom(1, 0, true, false, null));
    const part = fc.oneof(
      fc.array(primitive, { maxLength: 3 }),
      fc.dictionary(fc.constantFrom('name', 'kind', '1'), primitive, { maxKeys: 3, noNullPrototype: true }),
    );
    fc.assert(
      fc.property(fc.array(part, { maxLength: 30 }), fc.integer({ min: 1, max: 40 }), (parts, bound) => {
        const interner = new StringInterner(bound);
        const seen = new Map<object, string>();
        for (const original of parts) {
          const text = `${Array.isArray(original)}${JSON.stringify(original)}`;
          const shared = interner.share(structuredClone(original));
          expect(shared).toStrictEqual(original);
          // The same object is only ever handed out for parts of the same kind and the same JSON text.
          const earlier = seen.get(shared);
          if (earlier !== undefined) expect(earlier).toBe(text);
          seen.set(shared, text);
        }
      }),
    );
  });

  it('hands out one copy of equal parts', () => {
    const interner = new StringInterner();
    const first = interner.share({ apiGroup: 'g', kind: 'Pool', name: 'p' });
    expect(interner.share({ apiGroup: 'g', kind: 'Pool', name: 'p' })).toBe(first);
    expect(interner.share({ apiGroup: 'g', kind: 'Pool', name: 'q' })).not.toBe(first);
    expect(interner.share(['g', 'Pool', 'p'])).not.toBe(first);
    expect(interner.share([1])).not.toBe(interner.share(['1']));
  });

  it('returns equal strings and never holds more than its bound', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ maxLength: 8 }), { maxLength: 200 }),
        fc.integer({ min: 1, max: 16 }),
        (values, bound) => {
          const interner = new StringInterner(bound);
          for (const value of values) {
            expect(interner.intern(value)).toBe(value);
            expect(interner.size).toBeLessThanOrEqual(bound);
          }
        },
      ),
    );
  });
});

describe('compactDecoded (compaction in place of an object fresh from JSON.parse)', () => {
  /** A wire object, sometimes with what compaction drops: managedFields (watch events carry them) and last-applied. */
  const decodedObject = fc
    .tuple(wireObject, fc.boolean(), fc.option(fc.string(), { nil: undefined }))
    .map(([object, withManagedFields, lastApplied]) => {
      const metadata: Record<string, unknown> = { ...object.metadata };
      if (withManagedFields) metadata.managedFields = [{ manager: 'kubectl', operation: 'Apply', fieldsV1: {} }];
      if (lastApplied !== undefined)
        metadata.annotations = { ...object.metadata.annotations, [LAST_APPLIED]: lastApplied };
      return JSON.stringify({ ...object, metadata });
    });

  it('gives what compactObject gives, sharing the same parts', () => {
    fc.assert(
      fc.property(decodedObject, (text) => {
        const copyInterner = new StringInterner();
        const inPlaceInterner = new StringInterner();
        // Twice each, so that the second objects are made of parts seen before and shared.
        const copies = [0, 1].map(() => compactObject(JSON.parse(text) as KubeObject, copyInterner));
        const inPlace = [0, 1].map(() => compactDecoded(JSON.parse(text) as KubeObject, inPlaceInterner));
        expect(inPlace).toStrictEqual(copies);
        expect(inPlaceInterner.size).toBe(copyInterner.size);
        const [first, second] = inPlace as [KubeObject, KubeObject];
        const [firstCopy, secondCopy] = copies as [KubeObject, KubeObject];
        // Shared parts are the same object in the second decode exactly where the copy shares them.
        expect(second.metadata.finalizers === first.metadata.finalizers).toBe(
          secondCopy.metadata.finalizers === firstCopy.metadata.finalizers,
        );
        expect(second.metadata.ownerReferences === first.metadata.ownerReferences).toBe(
          secondCopy.metadata.ownerReferences === firstCopy.metadata.ownerReferences,
        );
      }),
    );
  });

  it('returns the object it was given, with the same metadata unless that carried something dropped', () => {
    const plain = JSON.parse('{"metadata":{"name":"a","finalizers":["f"]},"spec":{"poolRef":{"name":"p"}}}');
    const metadata = plain.metadata;
    expect(compactDecoded(plain)).toBe(plain);
    expect(plain.metadata).toBe(metadata);
    const watched = JSON.parse('{"metadata":{"name":"a","managedFields":[{"manager":"m"}]}}');
    const watchedMetadata = watched.metadata;
    expect(compactDecoded(watched)).toStrictEqual({ metadata: { name: 'a' } });
    // A new metadata: the one from JSON.parse is not stripped in place.
    expect(watchedMetadata.managedFields).toEqual([{ manager: 'm' }]);
  });

  it('keeps a `__proto__` key as a property, and -0 out of shared parts', () => {
    const interner = new StringInterner();
    const text =
      '{"metadata":{"name":"a","finalizers":["f"]},"data":{"__proto__":"kept","b":2},"spec":{"poolRef":{"w":-0}}}';
    const objects = [0, 1, 2].map(() => compactDecoded(JSON.parse(text) as KubeObject, interner));
    const first = objects[0] as unknown as { data: object; spec: { poolRef: { w: number } } };
    expect(Object.getPrototypeOf(first.data)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(first.data, '__proto__')?.value).toBe('kept');
    const last = objects[2] as unknown as { spec: { poolRef: { w: number } } };
    expect(Object.is(last.spec.poolRef.w, -0)).toBe(true);
    expect(last.spec.poolRef).not.toBe(first.spec.poolRef);
  });
});
