import { fileURLToPath } from 'node:url';
import type * as z from 'zod';
import { CLUSTERCTL_LABEL, CONTRACT_V1BETA2_LABEL, PROVIDER_NAME_LABEL } from '../../cluster/v1beta2/constants.js';
import { crdFiles, crdFilesYaml, type GeneratedCRDFile } from '../../crd/crd-files.js';
import {
  buildCustomResourceDefinition,
  type CustomResourceDefinition,
  type PrinterColumn,
} from '../../crd/custom-resource-definition.js';
import {
  METAL3_CRD_PROVIDER_LABEL_VALUE,
  METAL3_IP_ADDRESS_KIND,
  METAL3_IP_CLAIM_KIND,
  METAL3_IP_POOL_KIND,
  METAL3_IPAM_GROUP,
  METAL3_IPAM_V1ALPHA1_VERSION,
} from './constants.js';
import { Metal3IPAddress } from './ip-address.js';
import { Metal3IPClaim } from './ip-claim.js';
import { Metal3IPPool } from './ip-pool.js';

/**
 * The Metal3 CRDs as Metal3 publishes them (names, scope, categories, short names, printer columns, status
 * subresources of ip-address-manager v1.10.1's kubebuilder markers), generated from the zod schemas. They live in
 * their own directory: the Metal3 API is off by default, so the Tally CRD directory every installer reads stays
 * without them.
 *
 * Labels, the ones `clusterctl init --ipam metal3` leaves on Metal3's own CRDs, because these are applied with
 * kubectl, outside clusterctl:
 * - `clusterctl.cluster.x-k8s.io`: `clusterctl move` discovers kinds only from CRDs with this label; without it every
 *   IPPool, IPClaim and IPAddress stayed on the source of a move and was deleted there with its Cluster;
 * - `cluster.x-k8s.io/provider: ipam-metal3`: Metal3's provider owns them, so `clusterctl delete --ipam tally
 *   --include-crd` leaves them (and every Metal3 object) alone;
 * - the v1beta2 contract label, because an IPAddressClaim may reference an IPPool (`poolRef: {apiGroup:
 *   ipam.metal3.io, kind: IPPool}`) and Cluster API resolves that kind's CRD.
 * No clusterctl move-hierarchy label: as in Metal3, objects move along their owner references to the Cluster.
 */
export const METAL3_CRD_LABELS: Readonly<Record<string, string>> = {
  [CLUSTERCTL_LABEL]: '',
  [PROVIDER_NAME_LABEL]: METAL3_CRD_PROVIDER_LABEL_VALUE,
  [CONTRACT_V1BETA2_LABEL]: METAL3_IPAM_V1ALPHA1_VERSION,
};

function ageColumn(kind: string): PrinterColumn {
  return {
    name: 'Age',
    type: 'date',
    jsonPath: '.metadata.creationTimestamp',
    description: `Time duration since creation of Metal3${kind}`,
  };
}

/** Metal3's short names: `<abbreviation>`, the singular, and `m3`/`metal3` forms of both, plus the plural forms. */
function shortNames(abbreviation: string, singular: string): string[] {
  return [
    abbreviation,
    singular,
    `m3${abbreviation}`,
    `m3${singular}`,
    `m3${singular}${singular.endsWith('s') ? 'es' : 's'}`,
    `metal3${abbreviation}`,
    `metal3${singular}`,
    `metal3${singular}${singular.endsWith('s') ? 'es' : 's'}`,
  ];
}

interface Metal3KindDefinition {
  kind: string;
  schema: z.ZodType;
  categories: string[];
  shortNames: string[];
  statusSubresource: boolean;
  columns: PrinterColumn[];
}

const METAL3_KINDS: readonly Metal3KindDefinition[] = [
  {
    kind: METAL3_IP_POOL_KIND,
    schema: Metal3IPPool,
    categories: ['cluster-api'],
    shortNames: shortNames('ipp', 'ippool'),
    statusSubresource: true,
    columns: [
      {
        name: 'Cluster',
        type: 'string',
        jsonPath: '.metadata.labels.cluster\\.x-k8s\\.io/cluster-name',
        description: 'Cluster to which this template belongs',
      },
      ageColumn(METAL3_IP_POOL_KIND),
    ],
  },
  {
    kind: METAL3_IP_CLAIM_KIND,
    schema: Metal3IPClaim,
    categories: ['cluster-api'],
    shortNames: shortNames('ipc', 'ipclaim'),
    statusSubresource: true,
    columns: [ageColumn(METAL3_IP_CLAIM_KIND)],
  },
  {
    kind: METAL3_IP_ADDRESS_KIND,
    schema: Metal3IPAddress,
    categories: ['metal3'],
    shortNames: shortNames('ipa', 'ipaddress'),
    statusSubresource: false,
    columns: [ageColumn(METAL3_IP_ADDRESS_KIND)],
  },
];

/** IPPool, IPClaim and IPAddress of `ipam.metal3.io/v1alpha1`, namespaced, as Metal3 defines them. */
export function metal3CustomResourceDefinitions(): CustomResourceDefinition[] {
  return METAL3_KINDS.map((definition) =>
    buildCustomResourceDefinition({
      group: METAL3_IPAM_GROUP,
      kind: definition.kind,
      scope: 'Namespaced',
      shortNames: definition.shortNames,
      categories: definition.categories,
      labels: { ...METAL3_CRD_LABELS },
      versions: [
        {
          name: METAL3_IPAM_V1ALPHA1_VERSION,
          schema: definition.schema,
          storage: true,
          statusSubresource: definition.statusSubresource,
          printerColumns: definition.columns,
        },
      ],
    }),
  );
}

/** The Metal3 CRDs with their committed file names (what `gen-crds` writes into `config/metal3/crd/`). */
export function metal3GeneratedCRDFiles(): GeneratedCRDFile[] {
  return crdFiles(metal3CustomResourceDefinitions());
}

/** The Metal3 CRDs as one multi-document YAML stream. */
export function metal3CRDsYaml(): string {
  return crdFilesYaml(metal3GeneratedCRDFiles());
}

/** Absolute path of the committed Metal3 CRD directory (`config/metal3/crd/`, shipped in the package). */
export function metal3CRDDirectory(): string {
  return fileURLToPath(new URL('../../../config/metal3/crd/', import.meta.url));
}
