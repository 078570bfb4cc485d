import { TallyIPPool } from '@tally-ipam/api-types';
import { decodeCompacted, type KubeObject } from '@tally-ipam/controller-kit/cache';
import { compiledSchema, parsesToItsInput } from '@tally-ipam/controller-kit/client';
import { LEDGER_RESOURCE } from '@tally-ipam/ledger';
import { describe, expect, it } from 'vitest';
import type { ZodType } from 'zod';
import { REQUESTED_ADDRESS_ANNOTATION } from '../src/constants.js';
import { ADDRESS_RESOURCE, CLAIM_RESOURCE, POOL_RESOURCES } from '../src/resources.js';

/**
 * What the reconcilers read from cached objects, in full: the cache's default transform (compactObject) must hand every
 * one of these fields to them as the API server sent it, and drop only managedFields and kubectl's last-applied
 * annotation. A transform that dropped a field a reconciler reads fails here, by name.
 */
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';
const managedFields = [{ manager: 'kubectl', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': {} } }];
const ownerReference = {
  apiVersion: 'cluster.x-k8s.io/v1beta2',
  kind: 'Machine',
  name: 'm-1',
  uid: 'u-m',
  controller: true,
};

const claim = {
  apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
  kind: 'IPAddressClaim',
  metadata: {
    name: 'claim-1',
    namespace: 'ns',
    uid: 'u-claim',
    resourceVersion: '42',
    generation: 2,
    creationTimestamp: '2026-11-24T23:00:00Z',
    deletionTimestamp: '2026-11-24T23:05:00Z',
    labels: { 'cluster.x-k8s.io/cluster-name': 'c1' },
    annotations: { [REQUESTED_ADDRESS_ANNOTATION]: '10.0.0.5', 'cluster.x-k8s.io/paused': '', [LAST_APPLIED]: '{}' },
    finalizers: ['ipam.cluster.x-k8s.io/tally-release-address'],
    ownerReferences: [ownerReference],
    managedFields,
  },
  spec: { clusterName: 'c1', poolRef: { apiGroup: 'ipam.cluster.x-k8s.io', kind: 'TallyIPPool', name: 'pool' } },
  status: {
    addressRef: { name: 'claim-1' },
    conditions: [
      {
        type: 'Ready',
        status: 'True',
        reason: 'AddressAllocated',
        message: '10.0.0.5 allocated',
        lastTransitionTime: '2026-11-24T23:00:01Z',
        observedGeneration: 2,
      },
    ],
  },
};

const address = {
  apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
  kind: 'IPAddress',
  metadata: {
    name: 'claim-1',
    namespace: 'ns',
    uid: 'u-address',
    resourceVersion: '43',
    creationTimestamp: '2026-11-24T23:00:01Z',
    finalizers: ['ipam.cluster.x-k8s.io/tally-protect-address'],
    ownerReferences: [
      {
        apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
        kind: 'IPAddressClaim',
        name: 'claim-1',
        uid: 'u-claim',
        controller: true,
        blockOwnerDeletion: true,
      },
      {
        apiVersion: 'ipam.cluster.x-k8s.io/v1alpha1',
        kind: 'TallyIPPool',
        name: 'pool',
        uid: 'u-pool',
        controller: false,
        blockOwnerDeletion: true,
      },
    ],
    managedFields,
  },
  spec: {
    address: '10.0.0.5',
    prefix: 24,
    gateway: '10.0.0.1',
    poolRef: { apiGroup: 'ipam.cluster.x-k8s.io', kind: 'TallyIPPool', name: 'pool' },
    claimRef: { name: 'claim-1' },
  },
};

const ledger = {
  apiVersion: 'ipam.cluster.x-k8s.io/v1alpha1',
  kind: 'TallyAddressLedger',
  metadata: { name: 'ip4-10.0.0.0-24', uid: 'u-ledger', resourceVersion: '44', generation: 5, managedFields },
  spec: {
    entries: [
      {
        key: 'ip4-10.0.0.5',
        address: '10.0.0.5',
        poolRef: { apiGroup: 'ipam.cluster.x-k8s.io', kind: 'TallyIPPool', namespace: 'ns', name: 'pool' },
        claimRef: { namespace: 'ns', name: 'claim-1', uid: 'u-claim' },
        heldSince: '2026-11-24T23:00:00Z',
      },
      {
        key: 'ip4-10.0.0.6',
        address: '10.0.0.6',
        poolRef: { apiGroup: 'ipam.cluster.x-k8s.io', kind: 'TallyIPPool', namespace: 'ns', name: 'pool' },
        claimRef: { namespace: 'ns', name: 'claim-2', uid: 'u-claim-2' },
        heldSince: '2026-11-24T23:00:00Z',
        releasedAt: '2026-11-24T23:10:00Z',
      },
    ],
  },
};

const pool = {
  apiVersion: 'ipam.cluster.x-k8s.io/v1alpha1',
  kind: 'TallyIPPool',
  metadata: {
    name: 'pool',
    namespace: 'ns',
    uid: 'u-pool',
    resourceVersion: '45',
    generation: 3,
    labels: { 'cluster.x-k8s.io/cluster-name': 'c1' },
    annotations: { 'cluster.x-k8s.io/paused': '', [LAST_APPLIED]: '{"spec":{}}' },
    finalizers: ['ipam.cluster.x-k8s.io/tally-pool'],
    managedFields,
  },
  spec: { addresses: ['10.0.0.0/24'], prefix: 24, gateway: '10.0.0.1', reservations: [{ address: '10.0.0.9' }] },
  status: { conditions: [], addresses: { total: 256, used: 2, free: 254 } },
};

/** The object as the cache should hold it: the API server's copy without managedFields and last-applied. */
function withoutDropped<T extends { metadata: Record<string, unknown> }>(object: T): T {
  const { managedFields: _managed, annotations, ...metadata } = object.metadata;
  const kept = Object.entries((annotations ?? {}) as Record<string, string>).filter(([name]) => name !== LAST_APPLIED);
  return {
    ...object,
    metadata: { ...metadata, ...(kept.length > 0 ? { annotations: Object.fromEntries(kept) } : {}) },
  } as T;
}

describe('cached objects keep every field the reconcilers read', () => {
  const cases = [
    ['IPAddressClaim', CLAIM_RESOURCE.schema, claim],
    ['IPAddress', ADDRESS_RESOURCE.schema, address],
    ['TallyAddressLedger', LEDGER_RESOURCE.schema, ledger],
    ['TallyIPPool', POOL_RESOURCES.TallyIPPool.schema, pool],
  ] as const;
  for (const [kind, schema, raw] of cases) {
    it(`${kind}: decoded as the cache does equals the API server's object less managedFields and last-applied`, () => {
      const wire = JSON.parse(JSON.stringify(raw));
      const cached = decodeCompacted(compiledSchema<KubeObject>(schema), wire);
      expect(cached).toStrictEqual(schema.parse(withoutDropped(JSON.parse(JSON.stringify(raw)))));
      expect(cached.metadata).not.toHaveProperty('managedFields');
      expect(cached.metadata.annotations ?? {}).not.toHaveProperty([LAST_APPLIED]);
    });
  }

  it('every kind the provider caches is validated and kept as decoded, not rebuilt; a schema with defaults is parsed', () => {
    const cachedKinds: readonly (readonly [string, ZodType])[] = [
      [CLAIM_RESOURCE.kind, CLAIM_RESOURCE.schema],
      [ADDRESS_RESOURCE.kind, ADDRESS_RESOURCE.schema],
      [LEDGER_RESOURCE.kind, LEDGER_RESOURCE.schema],
      ...Object.values(POOL_RESOURCES).map((resource) => [resource.kind, resource.schema] as const),
    ];
    for (const [kind, schema] of cachedKinds) expect(parsesToItsInput(schema), kind).toBe(true);
    // The full pool schema (admission reads it) fills in defaults: parsed, never kept as sent.
    expect(parsesToItsInput(TallyIPPool)).toBe(false);
    const wire = JSON.parse(JSON.stringify(claim));
    expect(decodeCompacted(compiledSchema(CLAIM_RESOURCE.schema), wire)).toBe(wire);
  });
});
