import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../src/cache/object.js';
import { getCondition, setCondition } from '../src/capi/conditions.js';
import { CLUSTER_NAME_LABEL, PAUSED_ANNOTATION, WATCH_FILTER_LABEL } from '../src/capi/constants.js';
import { clusterNameOf, hasPausedAnnotation, isPaused, ownerClusterName, pausedCondition } from '../src/capi/pause.js';
import {
  clusterToObjectKeys,
  clusterUnpaused,
  resourceHasFilterLabel,
  resourceNotPaused,
  resourceNotPausedAndHasFilterLabel,
} from '../src/capi/predicates.js';
import {
  AlreadyOwnedError,
  findOwnerReference,
  isControlledBy,
  isOwnedBy,
  ownerReferenceTo,
  removeOwnerReference,
  setControllerReference,
  setOwnerReference,
} from '../src/client/owner-references.js';

function object(name: string, extra: Partial<KubeObject> & Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'example.com/v1',
    kind: 'Thing',
    ...extra,
    metadata: { name, namespace: 'ns', uid: `uid-${name}`, ...extra.metadata },
  };
}

const cluster = (name: string, paused?: boolean): KubeObject & { spec: { paused?: boolean } } => ({
  apiVersion: 'cluster.x-k8s.io/v1beta2',
  kind: 'Cluster',
  metadata: { name, namespace: 'ns', uid: `uid-cluster-${name}` },
  spec: paused === undefined ? {} : { paused },
});

describe('owner references', () => {
  it('sets a controller reference with blockOwnerDeletion and refuses a second controller', () => {
    const owner = object('owner');
    const child = setControllerReference(object('child'), owner);
    expect(child.metadata.ownerReferences).toEqual([
      {
        apiVersion: 'example.com/v1',
        kind: 'Thing',
        name: 'owner',
        uid: 'uid-owner',
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    expect(isControlledBy(child, owner)).toBe(true);
    expect(isOwnedBy(child, owner)).toBe(true);
    expect(setControllerReference(child, owner)).toEqual(child);
    expect(() => setControllerReference(child, object('other'))).toThrow(AlreadyOwnedError);
    expect(() => setControllerReference(child, object('other'))).toThrow(
      'Thing ns/child is already controlled by Thing "owner" (uid uid-owner)',
    );
  });

  it('adds non-controller owners alongside, replacing a reference to the same owner', () => {
    const controller = object('claim');
    const pool = object('pool', { kind: 'Pool' });
    let address = setControllerReference(object('address'), controller);
    address = setOwnerReference(address, pool, { blockOwnerDeletion: true });
    address = setOwnerReference(address, pool, { blockOwnerDeletion: true });
    expect(address.metadata.ownerReferences).toHaveLength(2);
    expect(findOwnerReference(address, { apiGroup: 'example.com', kind: 'Pool' })).toEqual({
      apiVersion: 'example.com/v1',
      kind: 'Pool',
      name: 'pool',
      uid: 'uid-pool',
      controller: false,
      blockOwnerDeletion: true,
    });
    expect(isControlledBy(address, pool)).toBe(false);
    expect(isOwnedBy(removeOwnerReference(address, pool), pool)).toBe(false);
  });

  it('never changes the object it is given', () => {
    fc.assert(
      fc.property(fc.array(fc.stringMatching(/^[a-z]{1,8}$/), { maxLength: 5 }), (names) => {
        const original = object('child');
        const snapshot = structuredClone(original);
        let current = original;
        for (const name of names) current = setOwnerReference(current, object(name));
        expect(original).toEqual(snapshot);
        expect(new Set(current.metadata.ownerReferences?.map((ref) => ref.name))).toEqual(new Set(names));
      }),
    );
  });

  it('needs a uid on the owner', () => {
    const unsaved: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } };
    expect(() => ownerReferenceTo(unsaved)).toThrow('cannot reference ConfigMap "x" as an owner');
  });
});

describe('CAPI pause and cluster name', () => {
  it('finds the cluster name in spec.clusterName first, then the cluster-name label', () => {
    expect(
      clusterNameOf(
        object('a', {
          spec: { clusterName: 'from-spec' },
          metadata: { name: 'a', labels: { [CLUSTER_NAME_LABEL]: 'from-label' } },
        }),
      ),
    ).toBe('from-spec');
    expect(
      clusterNameOf(object('a', { metadata: { name: 'a', labels: { [CLUSTER_NAME_LABEL]: 'from-label' } } })),
    ).toBe('from-label');
    expect(clusterNameOf(object('a'))).toBeUndefined();
    expect(clusterNameOf(object('a', { spec: { clusterName: 42 } }))).toBe(undefined);
  });

  it('is paused by the cluster spec or by the annotation (any value)', () => {
    const annotated = object('a', { metadata: { name: 'a', annotations: { [PAUSED_ANNOTATION]: '' } } });
    expect(hasPausedAnnotation(annotated)).toBe(true);
    expect(isPaused(undefined, annotated)).toBe(true);
    expect(isPaused(cluster('c', true), object('b'))).toBe(true);
    expect(isPaused(cluster('c', false), object('b'))).toBe(false);
    expect(isPaused(cluster('c'), object('b'))).toBe(false);
    expect(isPaused(undefined, object('b'))).toBe(false);
  });

  it('finds an owner Cluster by group and kind, whatever the version or controller flag', () => {
    const owned = setOwnerReference(object('infra'), { ...cluster('c1'), apiVersion: 'cluster.x-k8s.io/v1beta1' });
    expect(ownerClusterName(owned)).toBe('c1');
    expect(
      ownerClusterName(setOwnerReference(object('x'), { ...cluster('c2'), apiVersion: 'other.io/v1' })),
    ).toBeUndefined();
  });
});

describe('Paused condition', () => {
  it('is True with reason Paused and says why, or False with reason NotPaused', () => {
    const annotated = object('a', {
      metadata: { name: 'a', generation: 4, annotations: { [PAUSED_ANNOTATION]: '' } },
    });
    expect(pausedCondition(cluster('c', true), annotated)).toEqual({
      type: 'Paused',
      status: 'True',
      reason: 'Paused',
      message: 'Cluster spec.paused is set, Thing has the cluster.x-k8s.io/paused annotation',
      observedGeneration: 4,
    });
    expect(pausedCondition(cluster('c', false), object('b'))).toMatchObject({ status: 'False', reason: 'NotPaused' });
    const now = new Date('2026-01-01T00:00:00Z');
    const conditions = setCondition([], pausedCondition(undefined, annotated), now);
    expect(getCondition(conditions, 'Paused')).toMatchObject({ status: 'True', observedGeneration: 4 });
  });
});

describe('CAPI predicates', () => {
  const annotated = object('a', { metadata: { name: 'a', annotations: { [PAUSED_ANNOTATION]: 'true' } } });
  const labelled = object('b', { metadata: { name: 'b', labels: { [WATCH_FILTER_LABEL]: 'blue' } } });
  const plain = object('c');

  it('resourceNotPaused drops paused objects for every event kind', () => {
    const predicate = resourceNotPaused();
    expect(predicate.create?.({ object: annotated })).toBe(false);
    expect(predicate.update?.({ objectOld: plain, objectNew: annotated })).toBe(false);
    expect(predicate.delete?.({ object: annotated, deleteStateUnknown: false })).toBe(false);
    expect(predicate.generic?.({ object: plain })).toBe(true);
  });

  it('resourceHasFilterLabel keeps matching objects, or everything for an empty filter', () => {
    expect(resourceHasFilterLabel('blue').create?.({ object: labelled })).toBe(true);
    expect(resourceHasFilterLabel('red').create?.({ object: labelled })).toBe(false);
    expect(resourceHasFilterLabel('blue').create?.({ object: plain })).toBe(false);
    expect(resourceHasFilterLabel('').update?.({ objectOld: plain, objectNew: plain })).toBe(true);
    const both = resourceNotPausedAndHasFilterLabel('blue');
    expect(both.create?.({ object: labelled })).toBe(true);
    const pausedLabelled = object('d', {
      metadata: { name: 'd', labels: { [WATCH_FILTER_LABEL]: 'blue' }, annotations: { [PAUSED_ANNOTATION]: '' } },
    });
    expect(both.create?.({ object: pausedLabelled })).toBe(false);
  });

  it('clusterUnpaused passes unpaused creates and un-pausing updates only', () => {
    const predicate = clusterUnpaused();
    expect(predicate.create?.({ object: cluster('c', false) })).toBe(true);
    expect(predicate.create?.({ object: cluster('c', true) })).toBe(false);
    expect(predicate.update?.({ objectOld: cluster('c', true), objectNew: cluster('c', false) })).toBe(true);
    expect(predicate.update?.({ objectOld: cluster('c', false), objectNew: cluster('c', false) })).toBe(false);
    expect(predicate.update?.({ objectOld: cluster('c', false), objectNew: cluster('c', true) })).toBe(false);
    expect(predicate.delete?.({ object: cluster('c'), deleteStateUnknown: false })).toBe(false);
  });

  it('maps a Cluster to the keys of its objects in its namespace', () => {
    const objects: KubeObject[] = [
      object('by-spec', { spec: { clusterName: 'c' } }),
      object('by-label', { metadata: { name: 'by-label', labels: { [CLUSTER_NAME_LABEL]: 'c' } } }),
      object('other-cluster', { spec: { clusterName: 'd' } }),
      { ...object('other-ns', { spec: { clusterName: 'c' } }), metadata: { name: 'other-ns', namespace: 'elsewhere' } },
    ];
    const map = clusterToObjectKeys((namespace) => objects.filter((o) => o.metadata.namespace === namespace));
    expect(map(cluster('c'))).toEqual([
      { namespace: 'ns', name: 'by-spec' },
      { namespace: 'ns', name: 'by-label' },
    ]);
  });
});
