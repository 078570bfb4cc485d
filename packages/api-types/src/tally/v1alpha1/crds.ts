import type * as z from 'zod';
import { CLUSTERCTL_MOVE_HIERARCHY_LABEL, CONTRACT_V1BETA2_LABEL } from '../../cluster/v1beta2/constants.js';
import {
  buildCustomResourceDefinition,
  type CustomResourceDefinition,
  type PrinterColumn,
} from '../../crd/custom-resource-definition.js';
import { tallyAddressLedgerCustomResourceDefinition } from './address-ledger.js';
import {
  GLOBAL_TALLY_IP_POOL_KIND,
  GLOBAL_TALLY_PREFIX_POOL_KIND,
  TALLY_GROUP,
  TALLY_IP_POOL_KIND,
  TALLY_PREFIX_POOL_KIND,
  TALLY_PROVIDER_LABEL_VALUE,
  TALLY_V1ALPHA1_VERSION,
} from './constants.js';
import { GlobalTallyIPPool, TallyIPPool } from './ip-pool.js';
import { GlobalTallyPrefixPool, TallyPrefixPool } from './prefix-pool.js';

/**
 * Labels on every Tally CRD: the provider label clusterctl expects on IPAM components, the contract label that
 * tells Cluster API which versions implement the v1beta2 contract, and move-hierarchy so that `clusterctl move`
 * takes pools (and the IPAddresses they own) along, as the reference provider's CRDs do.
 */
export const TALLY_CRD_LABELS: Readonly<Record<string, string>> = {
  'cluster.x-k8s.io/provider': TALLY_PROVIDER_LABEL_VALUE,
  [CONTRACT_V1BETA2_LABEL]: TALLY_V1ALPHA1_VERSION,
  [CLUSTERCTL_MOVE_HIERARCHY_LABEL]: '',
};

const READY_COLUMN: PrinterColumn = {
  name: 'Ready',
  type: 'string',
  jsonPath: '.status.conditions[?(@.type=="Ready")].status',
  description: 'Whether the pool can serve claims.',
};
const AGE_COLUMN: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

function countColumns(field: 'ipAddresses' | 'prefixes'): PrinterColumn[] {
  return [
    { name: 'Total', type: 'integer', jsonPath: `.status.${field}.total`, description: 'Allocatable in total.' },
    { name: 'Used', type: 'integer', jsonPath: `.status.${field}.used`, description: 'Allocated to claims.' },
    { name: 'Free', type: 'integer', jsonPath: `.status.${field}.free`, description: 'Still available.' },
  ];
}

const IP_POOL_COLUMNS: PrinterColumn[] = [
  { name: 'Addresses', type: 'string', jsonPath: '.spec.addresses', description: 'Addresses handed out.' },
  ...countColumns('ipAddresses'),
  READY_COLUMN,
  { name: 'Prefix', type: 'integer', jsonPath: '.spec.prefix', priority: 1 },
  { name: 'Gateway', type: 'string', jsonPath: '.spec.gateway', priority: 1 },
  { name: 'Strategy', type: 'string', jsonPath: '.spec.allocationStrategy', priority: 1 },
  AGE_COLUMN,
];

const PREFIX_POOL_COLUMNS: PrinterColumn[] = [
  { name: 'Prefixes', type: 'string', jsonPath: '.spec.prefixes', description: 'Prefixes carved up.' },
  { name: 'Size', type: 'integer', jsonPath: '.spec.allocationPrefixLength', description: 'Allocation length.' },
  ...countColumns('prefixes'),
  READY_COLUMN,
  { name: 'Gateway', type: 'string', jsonPath: '.spec.gateway', priority: 1 },
  AGE_COLUMN,
];

interface PoolKindDefinition {
  kind: string;
  scope: 'Namespaced' | 'Cluster';
  schema: z.ZodType;
  shortNames: string[];
  columns: PrinterColumn[];
}

const POOL_KINDS: readonly PoolKindDefinition[] = [
  {
    kind: TALLY_IP_POOL_KIND,
    scope: 'Namespaced',
    schema: TallyIPPool,
    shortNames: ['tippool'],
    columns: IP_POOL_COLUMNS,
  },
  {
    kind: GLOBAL_TALLY_IP_POOL_KIND,
    scope: 'Cluster',
    schema: GlobalTallyIPPool,
    shortNames: ['gtippool'],
    columns: IP_POOL_COLUMNS,
  },
  {
    kind: TALLY_PREFIX_POOL_KIND,
    scope: 'Namespaced',
    schema: TallyPrefixPool,
    shortNames: ['tpfxpool'],
    columns: PREFIX_POOL_COLUMNS,
  },
  {
    kind: GLOBAL_TALLY_PREFIX_POOL_KIND,
    scope: 'Cluster',
    schema: GlobalTallyPrefixPool,
    shortNames: ['gtpfxpool'],
    columns: PREFIX_POOL_COLUMNS,
  },
];

/**
 * The Tally CRDs, generated from the zod schemas (the provider and the demo install these): the four pool kinds and
 * the cluster-scoped TallyAddressLedger the provider uses to make every allocation unique.
 */
export function tallyCustomResourceDefinitions(): CustomResourceDefinition[] {
  const pools = POOL_KINDS.map((pool) =>
    buildCustomResourceDefinition({
      group: TALLY_GROUP,
      kind: pool.kind,
      scope: pool.scope,
      shortNames: pool.shortNames,
      categories: ['cluster-api'],
      labels: { ...TALLY_CRD_LABELS },
      versions: [
        {
          name: TALLY_V1ALPHA1_VERSION,
          schema: pool.schema,
          storage: true,
          statusSubresource: true,
          printerColumns: pool.columns,
        },
      ],
    }),
  );
  return [...pools, tallyAddressLedgerCustomResourceDefinition()];
}
