import * as z from 'zod';
import {
  buildCustomResourceDefinition,
  type CustomResourceDefinition,
  type PrinterColumn,
} from '../../crd/custom-resource-definition.js';
import { UNCHECKED_BY_API_SERVER } from '../../crd/structural-schema.js';
import { IPADDRESSCLAIM_KIND, IPAM_GROUP } from '../../ipam/v1beta2/constants.js';
import { KIND_PATTERN } from '../../meta/v1/patterns.js';
import { ObjectMeta, ObjectName, Time } from '../../meta/v1/types.js';
import { type ParseResult, parseObject } from '../../parse.js';
import { echo } from '../../text/clip.js';
import {
  TALLY_GROUP,
  TALLY_PROVIDER_LABEL_VALUE,
  TALLY_V1ALPHA1_API_VERSION,
  TALLY_V1ALPHA1_VERSION,
} from './constants.js';
import { TallyAddressLedgerStatus } from './ledger-summary.js';

/**
 * TallyAddressLedger: one cluster-scoped object per aligned address block (an IPv4 /24, an IPv6 /120, or for prefix
 * allocations a block of 256 prefixes of one length), named by the block. It lists every allocation inside the block,
 * whatever pool made it, so pools with overlapping ranges share it. Every write carries the resourceVersion it was
 * computed from (or is a create of a block nobody holds yet): of two writers racing on one block, exactly one wins and
 * the other re-reads and re-decides, so an entry key is never held by two claims. One write carries the allocations of
 * many claims.
 */
export const TALLY_ADDRESS_LEDGER_KIND = 'TallyAddressLedger';

/** Allocations one ledger can hold: the 256 addresses of its block. */
export const MAX_LEDGER_ENTRIES = 256;

export const LedgerPoolReference = z
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
export type LedgerPoolReference = z.infer<typeof LedgerPoolReference>;

export const LedgerClaimReference = z
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
export type LedgerClaimReference = z.infer<typeof LedgerClaimReference>;

/** The claim's API group and kind, with the defaults an absent field stands for. */
export function claimReferenceGroupKind(ref: LedgerClaimReference): { apiGroup: string; kind: string } {
  return { apiGroup: ref.apiGroup ?? IPAM_GROUP, kind: ref.kind ?? IPADDRESSCLAIM_KIND };
}

/** Whether the reference names a Cluster API IPAddressClaim (rather than a claim of another IPAM API). */
export function isIPAddressClaimReference(ref: LedgerClaimReference): boolean {
  const { apiGroup, kind } = claimReferenceGroupKind(ref);
  return apiGroup === IPAM_GROUP && kind === IPADDRESSCLAIM_KIND;
}

/** Whether two references name the same claim object (group, kind, namespace and name; the uid aside). */
export function sameClaimName(a: LedgerClaimReference, b: LedgerClaimReference): boolean {
  const left = claimReferenceGroupKind(a);
  const right = claimReferenceGroupKind(b);
  return (
    left.apiGroup === right.apiGroup && left.kind === right.kind && a.namespace === b.namespace && a.name === b.name
  );
}

export const AddressLedgerEntry = z
  .object({
    key: z
      .string()
      .min(1)
      .max(63)
      .describe('What is allocated, named by the address alone: ip4-10.0.0.5, ip6-fd00--1, net4-10.0.1.0.24, …'),
    address: z.string().min(1).max(39).describe('The allocated address in canonical text (for a prefix: its network).'),
    prefix: z
      .int()
      .min(0)
      .max(128)
      .describe('Prefix length of a prefix allocation; absent for a single address.')
      .meta({ format: 'int32' })
      .optional(),
    poolRef: LedgerPoolReference,
    claimRef: LedgerClaimReference,
    heldSince: Time.describe(
      'When the entry was written for its claim; an orphan is released only after a safety age.',
    ),
    releasedAt: Time.describe(
      'Set when the claim released the address but reuse waits (grace period, least-recently-released order).',
    ).optional(),
  })
  .describe('One allocation: the address (or prefix), the pool it came from and the claim holding it.');
export type AddressLedgerEntry = z.infer<typeof AddressLedgerEntry>;

const ENTRY_DESCRIPTION =
  'One allocation: the address (or prefix), the pool it came from and the claim holding it. The API server checks ' +
  'only that the required fields are there; the provider checks every field where it reads the ledger.';

/**
 * `spec.entries` is an atomic list, not a list-map keyed by `key`: on a list-map the API server tracks managed fields
 * per entry, which doubled a full ledger (132 KB against 75 KB stored) and its CPU per update (75 against 32 ms per PUT
 * of a growing 256-entry ledger, measured on testenv). One entry per key is kept by the only writer (`AddressLedgers`
 * decides every write from a map keyed by `key`) and checked wherever a ledger is read: a ledger with a key twice does
 * not parse, so nothing is decided, written or allocated from it until a person fixes it (fail closed).
 *
 * For the same reason the API server does not check the fields of an entry (`UNCHECKED_BY_API_SERVER`: the CRD keeps
 * each entry's required fields only): checking every field of 256 entries was half of what a write of a full ledger
 * cost it (54 against 28 ms of API server CPU per PUT, `bench/ledger-write-cost.ts` of the ipam-provider). The fields
 * are checked by this schema wherever a ledger is read, exactly as a key twice is: a malformed entry makes its ledger
 * unreadable, so nothing is decided, written or allocated from the block until it is fixed.
 */
export const AddressLedgerEntries = z
  .array(AddressLedgerEntry.meta({ description: ENTRY_DESCRIPTION, [UNCHECKED_BY_API_SERVER]: true }))
  .max(MAX_LEDGER_ENTRIES)
  .superRefine((entries, ctx) => {
    const seen = new Map<string, number>();
    entries.forEach((entry, index) => {
      const first = seen.get(entry.key);
      if (first === undefined) {
        seen.set(entry.key, index);
        return;
      }
      ctx.addIssue({
        code: 'custom',
        path: [index, 'key'],
        message: `"${echo(entry.key)}" is already the key of entries[${first}]: a ledger holds one entry per key`,
      });
    });
  })
  .describe('The allocations inside the block, at most one per key (every reader refuses a ledger with a key twice).')
  .meta({ 'x-kubernetes-list-type': 'atomic' });

export const TallyAddressLedgerSpec = z
  .object({
    entries: AddressLedgerEntries.optional(),
  })
  .describe('The allocations of the block; the only part of the ledger any decision is made from.');
export type TallyAddressLedgerSpec = z.infer<typeof TallyAddressLedgerSpec>;

export const TallyAddressLedger = z
  .object({
    apiVersion: z.literal(TALLY_V1ALPHA1_API_VERSION),
    kind: z.literal(TALLY_ADDRESS_LEDGER_KIND),
    metadata: ObjectMeta,
    spec: TallyAddressLedgerSpec,
    status: TallyAddressLedgerStatus.optional(),
  })
  .describe('TallyAddressLedger lists the allocations of one address block cluster-wide; its name names the block.');
export type TallyAddressLedger = z.infer<typeof TallyAddressLedger>;

/** `kubectl get taddrledger`: the block is the name; the rest comes from the summary the writer keeps in `status`. */
const LEDGER_COLUMNS: PrinterColumn[] = [
  { name: 'Entries', type: 'integer', jsonPath: '.status.entries', description: 'Allocations in the block.' },
  { name: 'First', type: 'string', jsonPath: '.status.first', description: 'Lowest allocated address.' },
  { name: 'Last', type: 'string', jsonPath: '.status.last', description: 'Highest allocated address.' },
  { name: 'Pools', type: 'string', jsonPath: '.status.pools', description: 'Pools the entries came from.' },
  { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
];

/**
 * The ledger CRD. Not in clusterctl's move hierarchy: ledgers stay behind, the target's are rebuilt from the moved
 * IPAddresses, the source's entries are released once their claims are gone.
 */
export function tallyAddressLedgerCustomResourceDefinition(): CustomResourceDefinition {
  return buildCustomResourceDefinition({
    group: TALLY_GROUP,
    kind: TALLY_ADDRESS_LEDGER_KIND,
    scope: 'Cluster',
    shortNames: ['taddrledger'],
    labels: { 'cluster.x-k8s.io/provider': TALLY_PROVIDER_LABEL_VALUE },
    versions: [
      {
        name: TALLY_V1ALPHA1_VERSION,
        schema: TallyAddressLedger,
        storage: true,
        statusSubresource: false,
        printerColumns: LEDGER_COLUMNS,
      },
    ],
  });
}

/** Parses a ledger read from the API server; errors name the field path and the value. */
export function parseTallyAddressLedger(input: unknown): ParseResult<TallyAddressLedger> {
  return parseObject(TallyAddressLedger, TALLY_ADDRESS_LEDGER_KIND, input);
}
