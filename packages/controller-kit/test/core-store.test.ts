import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type KubeObject, keyOf } from '../src/cache/object.js';
import { indexByNamespace, indexByOwnerUID, NAMESPACE_INDEX, OWNER_UID_INDEX, Store } from '../src/cache/store.js';
import { dropManagedFields } from '../src/cache/transform.js';

interface Claim extends KubeObject {
  readonly spec: { readonly pool: string };
}

const claimArbitrary = fc.record({
  namespace: fc.constantFrom('ns-a', 'ns-b'),
  name: fc.constantFrom('c1', 'c2', 'c3', 'c4'),
  pool: fc.constantFrom('p1', 'p2', 'p3'),
  owners: fc.uniqueArray(fc.constantFrom('uid-1', 'uid-2', 'uid-3'), { maxLength: 2 }),
});

function makeClaim(input: { namespace: string; name: string; pool: string; owners: string[] }): Claim {
  return {
    metadata: {
      namespace: input.namespace,
      name: input.name,
      ownerReferences: input.owners.map((uid) => ({ apiVersion: 'v1', kind: 'Owner', name: uid, uid })),
    },
    spec: { pool: input.pool },
  };
}

const poolIndex = (claim: Claim): readonly string[] => [`${claim.metadata.namespace}/${claim.spec.pool}`];

type Operation = { kind: 'upsert'; claim: Claim } | { kind: 'remove'; key: string };

const operations = fc.array(
  fc.oneof(
    claimArbitrary.map((input): Operation => ({ kind: 'upsert', claim: makeClaim(input) })),
    claimArbitrary.map((input): Operation => ({ kind: 'remove', key: `${input.namespace}/${input.name}` })),
  ),
  { maxLength: 60 },
);

describe('Store', () => {
  it('keeps every index equal to a scan of the objects, whatever the writes', () => {
    fc.assert(
      fc.property(operations, fc.boolean(), (ops, indexLate) => {
        const indexers = {
          [NAMESPACE_INDEX]: indexByNamespace,
          [OWNER_UID_INDEX]: indexByOwnerUID,
          poolRef: poolIndex,
        };
        const store = new Store<Claim>(indexLate ? {} : indexers);
        const model = new Map<string, Claim>();
        for (const [position, op] of ops.entries()) {
          // Indexes added midway must be computed over what is already stored.
          if (indexLate && position === Math.floor(ops.length / 2)) store.addIndexers(indexers);
          if (op.kind === 'upsert') {
            expect(store.upsert(op.claim)).toBe(model.get(keyOf(op.claim)));
            model.set(keyOf(op.claim), op.claim);
          } else {
            expect(store.remove(op.key)).toBe(model.get(op.key));
            model.delete(op.key);
          }
        }
        if (indexLate && ops.length < 2) store.addIndexers(indexers);
        expect(new Set(store.keys())).toEqual(new Set(model.keys()));
        const scan = (values: (claim: Claim) => readonly string[], value: string): string[] =>
          [...model.values()]
            .filter((claim) => values(claim).includes(value))
            .map(keyOf)
            .sort();
        for (const value of ['ns-a', 'ns-b']) {
          expect(store.indexKeys(NAMESPACE_INDEX, value).sort()).toEqual(scan(indexByNamespace, value));
        }
        for (const value of ['uid-1', 'uid-2', 'uid-3']) {
          expect(store.indexKeys(OWNER_UID_INDEX, value).sort()).toEqual(scan(indexByOwnerUID, value));
        }
        for (const value of ['ns-a/p1', 'ns-a/p2', 'ns-b/p3']) {
          expect(store.byIndex('poolRef', value).map(keyOf).sort()).toEqual(scan(poolIndex, value));
        }
      }),
    );
  });

  it('refuses an unknown index and a conflicting index function', () => {
    const store = new Store<Claim>({ poolRef: poolIndex });
    expect(() => store.byIndex('nope', 'x')).toThrow(/no index "nope"/);
    expect(() => store.addIndexers({ poolRef: () => [] })).toThrow(/different index function/);
    store.addIndexers({ poolRef: poolIndex });
    expect(store.indexNames()).toEqual(['poolRef']);
  });

  it('keys cluster-scoped objects by name only', () => {
    const store = new Store<KubeObject>();
    store.upsert({ metadata: { name: 'cluster-wide' } });
    expect(store.get('cluster-wide')?.metadata.name).toBe('cluster-wide');
  });
});

describe('dropManagedFields', () => {
  it('removes managedFields without touching the input or anything else', () => {
    const object = { metadata: { name: 'a', labels: { x: 'y' }, managedFields: [{ manager: 'm' }] }, spec: { n: 1 } };
    const stripped = dropManagedFields(object);
    expect(stripped).toEqual({ metadata: { name: 'a', labels: { x: 'y' } }, spec: { n: 1 } });
    expect(object.metadata.managedFields).toHaveLength(1);
    const plain = { metadata: { name: 'b' } };
    expect(dropManagedFields(plain)).toBe(plain);
  });
});
