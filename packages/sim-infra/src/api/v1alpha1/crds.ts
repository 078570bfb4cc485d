import {
  buildCustomResourceDefinition,
  CONTRACT_V1BETA2_LABEL,
  type CustomResourceDefinition,
  type PrinterColumn,
} from '@tally-ipam/api-types';
import type * as z from 'zod';
import {
  SIM_CLUSTER_KIND,
  SIM_CLUSTER_TEMPLATE_KIND,
  SIM_GROUP,
  SIM_MACHINE_KIND,
  SIM_MACHINE_POOL_KIND,
  SIM_MACHINE_POOL_TEMPLATE_KIND,
  SIM_MACHINE_TEMPLATE_KIND,
  SIM_PROVIDER_NAME,
  SIM_V1ALPHA1_VERSION,
} from './constants.js';
import {
  SimCluster,
  SimClusterTemplate,
  SimMachine,
  SimMachinePool,
  SimMachinePoolTemplate,
  SimMachineTemplate,
} from './types.js';

/**
 * Labels on every Sim CRD: the contract label Cluster API reads to resolve a `{apiGroup, kind}` reference to a version
 * (without it CAPI cannot find the object at all) and the clusterctl provider label.
 */
export const SIM_CRD_LABELS: Readonly<Record<string, string>> = {
  'cluster.x-k8s.io/provider': SIM_PROVIDER_NAME,
  [CONTRACT_V1BETA2_LABEL]: SIM_V1ALPHA1_VERSION,
};

const READY_COLUMN: PrinterColumn = {
  name: 'Ready',
  type: 'string',
  jsonPath: '.status.conditions[?(@.type=="Ready")].status',
};
const PROVISIONED_COLUMN: PrinterColumn = {
  name: 'Provisioned',
  type: 'boolean',
  jsonPath: '.status.initialization.provisioned',
};
const CLUSTER_COLUMN: PrinterColumn = {
  name: 'Cluster',
  type: 'string',
  jsonPath: '.metadata.labels.cluster\\.x-k8s\\.io/cluster-name',
};
const AGE_COLUMN: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

interface SimKindDefinition {
  kind: string;
  schema: z.ZodType;
  shortNames: string[];
  status: boolean;
  columns: PrinterColumn[];
}

const SIM_KINDS: readonly SimKindDefinition[] = [
  {
    kind: SIM_CLUSTER_KIND,
    schema: SimCluster,
    shortNames: ['simc'],
    status: true,
    columns: [
      CLUSTER_COLUMN,
      { name: 'Host', type: 'string', jsonPath: '.spec.controlPlaneEndpoint.host' },
      { name: 'Port', type: 'integer', jsonPath: '.spec.controlPlaneEndpoint.port' },
      PROVISIONED_COLUMN,
      READY_COLUMN,
      AGE_COLUMN,
    ],
  },
  {
    kind: SIM_CLUSTER_TEMPLATE_KIND,
    schema: SimClusterTemplate,
    shortNames: ['simct'],
    status: false,
    columns: [AGE_COLUMN],
  },
  {
    kind: SIM_MACHINE_KIND,
    schema: SimMachine,
    shortNames: ['simm'],
    status: true,
    columns: [
      CLUSTER_COLUMN,
      { name: 'ProviderID', type: 'string', jsonPath: '.spec.providerID' },
      {
        name: 'Addresses',
        type: 'string',
        jsonPath: '.status.addresses[?(@.type=="InternalIP")].address',
        priority: 1,
      },
      PROVISIONED_COLUMN,
      READY_COLUMN,
      AGE_COLUMN,
    ],
  },
  {
    kind: SIM_MACHINE_TEMPLATE_KIND,
    schema: SimMachineTemplate,
    shortNames: ['simmt'],
    status: true,
    columns: [AGE_COLUMN],
  },
  {
    kind: SIM_MACHINE_POOL_KIND,
    schema: SimMachinePool,
    shortNames: ['simmp'],
    status: true,
    columns: [
      CLUSTER_COLUMN,
      { name: 'Replicas', type: 'integer', jsonPath: '.status.replicas' },
      { name: 'Ready', type: 'boolean', jsonPath: '.status.ready' },
      { name: 'ProviderIDs', type: 'string', jsonPath: '.spec.providerIDList', priority: 1 },
      AGE_COLUMN,
    ],
  },
  {
    kind: SIM_MACHINE_POOL_TEMPLATE_KIND,
    schema: SimMachinePoolTemplate,
    shortNames: ['simmpt'],
    status: false,
    columns: [AGE_COLUMN],
  },
];

/** The Sim CRDs, generated from the zod schemas with api-types' generator (names are CAPI's `CalculateCRDName`). */
export function simCustomResourceDefinitions(): CustomResourceDefinition[] {
  return SIM_KINDS.map((definition) =>
    buildCustomResourceDefinition({
      group: SIM_GROUP,
      kind: definition.kind,
      scope: 'Namespaced',
      shortNames: definition.shortNames,
      categories: ['cluster-api'],
      labels: { ...SIM_CRD_LABELS },
      versions: [
        {
          name: SIM_V1ALPHA1_VERSION,
          schema: definition.schema,
          storage: true,
          statusSubresource: definition.status,
          printerColumns: definition.columns,
        },
      ],
    }),
  );
}
