import * as z from 'zod';
import { buildCustomResourceDefinition, type CustomResourceDefinition } from '../../crd/custom-resource-definition.js';
import { IPADDRESSCLAIM_KIND, IPAM_GROUP } from '../../ipam/v1beta2/constants.js';
import { KIND_PATTERN } from '../../meta/v1/patterns.js';
import { ObjectMeta, ObjectName, Time } from '../../meta/v1/types.js';
import { type ParseResult, parseObject } from '../../parse.js';
import {
  TALLY_GROUP,
  TALLY_PROVIDER_LABEL_VALUE,
  TALLY_V1ALPHA1_API_VERSION,
  TALLY_V1ALPHA1_VERSION,
} from './constants.js';

/**
 * TallyAddressLock: one cluster-scoped object per allocated address (or prefix), named by the address. The API
 * server's name uniqueness is the lock: two claims — in one pool, in two pools with overlapping ranges, or served by
 * two controller replicas at once — can never both create the lock of one address. It has no owner reference (a
 * cluster-scoped object cannot be owned by a namespaced claim); the IPAM provider creates and deletes it explicitly.
 */
export const TALLY_ADDRESS_LOCK_KIND = 'TallyAddressLock';

const immutable = (field: string) => ({
  'x-kubernetes-validations': [
    {
      rule: 'self == oldSelf',
      message: `${field} is immutable: a lock belongs to one allocation`,
      reason: 'FieldValueForbidden',
    },
  ],
});

export const AddressLockPoolReference = z
  .object({
    apiGroup: ObjectName,
    kind: z.string().min(1).max(63).regex(new RegExp(KIND_PATTERN)),
    name: ObjectName,
    namespace: z
      .string()
      .min(1)
      .max(63)
      .describe('Namespace of a namespaced pool; absent for a global pool.')
      .optional(),
  })
  .describe('The pool the address was allocated from.');
export type AddressLockPoolReference = z.infer<typeof AddressLockPoolReference>;

export const AddressLockClaimReference = z
  .object({
    apiGroup: ObjectName.describe(
      'API group of the claim; absent for an IPAddressClaim of ipam.cluster.x-k8s.io (the Metal3 API: ipam.metal3.io).',
    ).optional(),
    kind: z
      .string()
      .min(1)
      .max(63)
      .regex(new RegExp(KIND_PATTERN))
      .describe('Kind of the claim; absent for IPAddressClaim (the Metal3 API: IPClaim).')
      .optional(),
    namespace: z.string().min(1).max(63),
    name: ObjectName,
    uid: z.string().min(1).max(64),
  })
  .describe('The claim holding the address; the uid tells a re-created claim of the same name apart.');
export type AddressLockClaimReference = z.infer<typeof AddressLockClaimReference>;

/** The claim's API group and kind, with the defaults an absent field stands for. */
export function claimReferenceGroupKind(ref: AddressLockClaimReference): { apiGroup: string; kind: string } {
  return { apiGroup: ref.apiGroup ?? IPAM_GROUP, kind: ref.kind ?? IPADDRESSCLAIM_KIND };
}

/** Whether the reference names a Cluster API IPAddressClaim (rather than a claim of another IPAM API). */
export function isIPAddressClaimReference(ref: AddressLockClaimReference): boolean {
  const { apiGroup, kind } = claimReferenceGroupKind(ref);
  return apiGroup === IPAM_GROUP && kind === IPADDRESSCLAIM_KIND;
}

/** Whether two references name the same claim object (group, kind, namespace and name; the uid aside). */
export function sameClaimName(a: AddressLockClaimReference, b: AddressLockClaimReference): boolean {
  const left = claimReferenceGroupKind(a);
  const right = claimReferenceGroupKind(b);
  return (
    left.apiGroup === right.apiGroup && left.kind === right.kind && a.namespace === b.namespace && a.name === b.name
  );
}

export const TallyAddressLockSpec = z.object({
  address: z
    .string()
    .min(1)
    .max(39)
    .describe('The allocated address in canonical text (for a prefix: its first address).')
    .meta(immutable('address')),
  prefix: z
    .int()
    .min(0)
    .max(128)
    .describe('Prefix length of a prefix allocation; absent for a single address.')
    .meta({ format: 'int32', ...immutable('prefix') })
    .optional(),
  poolRef: AddressLockPoolReference.meta(immutable('poolRef')),
  claimRef: AddressLockClaimReference.meta(immutable('claimRef')),
  releasedAt: Time.describe(
    'Set when the claim released the address but reuse waits (grace period, least-recently-released order).',
  ).optional(),
});
export type TallyAddressLockSpec = z.infer<typeof TallyAddressLockSpec>;

export const TallyAddressLock = z
  .object({
    apiVersion: z.literal(TALLY_V1ALPHA1_API_VERSION),
    kind: z.literal(TALLY_ADDRESS_LOCK_KIND),
    metadata: ObjectMeta,
    spec: TallyAddressLockSpec,
  })
  .describe('TallyAddressLock reserves one address (or prefix) cluster-wide; its name is derived from the address.');
export type TallyAddressLock = z.infer<typeof TallyAddressLock>;

/**
 * The rule the lock CRD carries once allocations live in TallyAddressLedgers: no lock can be created any more, so a
 * controller of an older version still running during an upgrade cannot allocate behind the ledgers' back. Existing
 * locks stay readable and deletable (deletes are not validated) until the migration has imported and deleted them.
 */
export const RETIRED_LOCK_RULE = {
  rule: 'false',
  message:
    'TallyAddressLock is retired: allocations are kept in TallyAddressLedgers; upgrade every Tally controller replica',
  reason: 'FieldValueForbidden',
} as const;

export interface AddressLockCRDOptions {
  /** Refuse every create (the fence of the lock → ledger migration). */
  readonly retired?: boolean | undefined;
}

/** The lock CRD. Not in clusterctl's move hierarchy: locks stay behind and are re-created from the moved IPAddresses. */
export function tallyAddressLockCustomResourceDefinition(
  options: AddressLockCRDOptions = {},
): CustomResourceDefinition {
  return buildCustomResourceDefinition({
    group: TALLY_GROUP,
    kind: TALLY_ADDRESS_LOCK_KIND,
    scope: 'Cluster',
    shortNames: ['taddrlock'],
    labels: { 'cluster.x-k8s.io/provider': TALLY_PROVIDER_LABEL_VALUE },
    versions: [
      {
        name: TALLY_V1ALPHA1_VERSION,
        schema: TallyAddressLock,
        storage: true,
        statusSubresource: false,
        ...(options.retired ? { validations: [{ ...RETIRED_LOCK_RULE }] } : {}),
        printerColumns: [
          { name: 'Address', type: 'string', jsonPath: '.spec.address' },
          { name: 'Pool', type: 'string', jsonPath: '.spec.poolRef.name' },
          { name: 'Claim', type: 'string', jsonPath: '.spec.claimRef.name' },
          { name: 'Released', type: 'date', jsonPath: '.spec.releasedAt' },
          { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
        ],
      },
    ],
  });
}

/** Parses a lock read from the API server; errors name the field path and the value. */
export function parseTallyAddressLock(input: unknown): ParseResult<TallyAddressLock> {
  return parseObject(TallyAddressLock, TALLY_ADDRESS_LOCK_KIND, input);
}
