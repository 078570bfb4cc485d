import { fileURLToPath } from 'node:url';
import type * as z from 'zod';
import {
  CLUSTERCTL_LABEL,
  CLUSTERCTL_MOVE_HIERARCHY_LABEL,
  PROVIDER_NAME_LABEL,
} from '../../cluster/v1beta2/constants.js';
import { crdFiles, crdFilesYaml, type GeneratedCRDFile } from '../../crd/crd-files.js';
import {
  buildCustomResourceDefinition,
  type CustomResourceDefinition,
  type PrinterColumn,
} from '../../crd/custom-resource-definition.js';
import {
  GLOBAL_IN_CLUSTER_IP_POOL_KIND,
  GLOBAL_IN_CLUSTER_PREFIX_POOL_KIND,
  IN_CLUSTER_IP_POOL_KIND,
  IN_CLUSTER_IPAM_GROUP,
  IN_CLUSTER_PREFIX_POOL_KIND,
  IN_CLUSTER_PROVIDER_NAME,
  IN_CLUSTER_V1ALPHA2_VERSION,
} from './constants.js';
import { GlobalInClusterIPPool, InClusterIPPool } from './ip-pool.js';
import { GlobalInClusterPrefixPool, InClusterPrefixPool } from './prefix-pool.js';

/**
 * The in-cluster provider's CRDs as its v1.1.0 release installs them, generated from the zod schemas: names, scope,
 * categories, printer columns and status subresources of its kubebuilder markers. Their own directory, like the
 * Metal3 CRDs: serving these kinds is off by default, and the Tally CRD directory every installer reads stays
 * without them.
 *
 * Labels, the ones `clusterctl init --ipam in-cluster` leaves on the reference's CRDs, so that applying these over
 * a running installation changes no label clusterctl relies on:
 * - `clusterctl.cluster.x-k8s.io/move-hierarchy`: the reference's own patch; pools are roots of `clusterctl move`
 *   (they have no owner), so without it a move left them behind;
 * - `clusterctl.cluster.x-k8s.io`, which clusterctl puts on everything it installs and which `clusterctl move` reads
 *   to discover kinds;
 * - `cluster.x-k8s.io/provider: ipam-in-cluster`: the CRDs stay the reference provider's, so `clusterctl delete
 *   --ipam tally --include-crd` leaves them (and every pool) alone, and the way back needs no relabelling.
 *
 * Only v1alpha2. The reference also serves a deprecated v1alpha1 of the IP pools through a conversion webhook; see
 * docs/design/in-cluster-drop-in.md for why it is left out and what that means for a take-over.
 */
export const IN_CLUSTER_CRD_LABELS: Readonly<Record<string, string>> = {
  [CLUSTERCTL_LABEL]: '',
  [CLUSTERCTL_MOVE_HIERARCHY_LABEL]: '',
  [PROVIDER_NAME_LABEL]: IN_CLUSTER_PROVIDER_NAME,
};

function countColumns(what: string): PrinterColumn[] {
  return [
    { name: 'Total', type: 'integer', jsonPath: '.status.ipAddresses.total', description: `Count of ${what}` },
    {
      name: 'Free',
      type: 'integer',
      jsonPath: '.status.ipAddresses.free',
      description: `Count of unallocated ${what}`,
    },
    { name: 'Used', type: 'integer', jsonPath: '.status.ipAddresses.used', description: `Count of allocated ${what}` },
  ];
}

interface InClusterKindDefinition {
  kind: string;
  schema: z.ZodType;
  scope: 'Namespaced' | 'Cluster';
  columns: PrinterColumn[];
}

const IP_POOL_COLUMNS: PrinterColumn[] = [
  { name: 'Addresses', type: 'string', jsonPath: '.spec.addresses', description: 'Addresses the pool hands out' },
  ...countColumns('addresses in the pool'),
];
const PREFIX_POOL_COLUMNS: PrinterColumn[] = [
  { name: 'Prefixes', type: 'string', jsonPath: '.spec.prefixes', description: 'Prefixes sub-prefixes are cut from' },
  ...countColumns('sub-prefixes in the pool'),
];

const IN_CLUSTER_KINDS: readonly InClusterKindDefinition[] = [
  { kind: IN_CLUSTER_IP_POOL_KIND, schema: InClusterIPPool, scope: 'Namespaced', columns: IP_POOL_COLUMNS },
  { kind: GLOBAL_IN_CLUSTER_IP_POOL_KIND, schema: GlobalInClusterIPPool, scope: 'Cluster', columns: IP_POOL_COLUMNS },
  { kind: IN_CLUSTER_PREFIX_POOL_KIND, schema: InClusterPrefixPool, scope: 'Namespaced', columns: PREFIX_POOL_COLUMNS },
  {
    kind: GLOBAL_IN_CLUSTER_PREFIX_POOL_KIND,
    schema: GlobalInClusterPrefixPool,
    scope: 'Cluster',
    columns: PREFIX_POOL_COLUMNS,
  },
];

/** The four pool kinds of `ipam.cluster.x-k8s.io/v1alpha2`, as the in-cluster provider defines them. */
export function inClusterCustomResourceDefinitions(): CustomResourceDefinition[] {
  return IN_CLUSTER_KINDS.map((definition) =>
    buildCustomResourceDefinition({
      group: IN_CLUSTER_IPAM_GROUP,
      kind: definition.kind,
      scope: definition.scope,
      categories: ['cluster-api'],
      labels: { ...IN_CLUSTER_CRD_LABELS },
      versions: [
        {
          name: IN_CLUSTER_V1ALPHA2_VERSION,
          schema: definition.schema,
          storage: true,
          statusSubresource: true,
          printerColumns: definition.columns,
        },
      ],
    }),
  );
}

/** The in-cluster CRDs with their committed file names (what `gen-crds` writes into `config/in-cluster/crd/`). */
export function inClusterGeneratedCRDFiles(): GeneratedCRDFile[] {
  return crdFiles(inClusterCustomResourceDefinitions());
}

/** The in-cluster CRDs as one multi-document YAML stream. */
export function inClusterCRDsYaml(): string {
  return crdFilesYaml(inClusterGeneratedCRDFiles());
}

/** Absolute path of the committed in-cluster CRD directory (`config/in-cluster/crd/`, shipped in the package). */
export function inClusterCRDDirectory(): string {
  return fileURLToPath(new URL('../../../config/in-cluster/crd/', import.meta.url));
}
