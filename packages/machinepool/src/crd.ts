import { calculateCRDName, contractVersionLabel } from '@tally-ipam/api-types';
import * as z from 'zod';
import { CONTRACT_LABEL_KEY, INFRA_MACHINE_POOL_CONTRACT_VERSION } from './constants.js';

/** The CRD names CAPI computes for an InfraMachinePool kind and its template (`contract.CalculateCRDName`). */
export function infraMachinePoolCRDNames(
  group: string,
  kind: string,
): { readonly infraMachinePool: string; readonly infraMachinePoolTemplate: string } {
  return {
    infraMachinePool: calculateCRDName(group, kind),
    infraMachinePoolTemplate: calculateCRDName(group, `${kind}Template`),
  };
}

/**
 * The label every provider CRD CAPI reads carries — InfraMachinePool and InfraMachinePoolTemplate (and the
 * InfraMachine of MachinePool Machines): `cluster.x-k8s.io/v1beta2: <served versions joined by "_">`.
 */
export function infraMachinePoolContractLabels(servedVersions: readonly string[]): Record<string, string> {
  return contractVersionLabel(INFRA_MACHINE_POOL_CONTRACT_VERSION, servedVersions);
}

interface SchemaNode {
  readonly type?: string | undefined;
  readonly properties?: Readonly<Record<string, SchemaNode>> | undefined;
  readonly items?: SchemaNode | undefined;
}
const SchemaNode: z.ZodType<SchemaNode> = z.lazy(() =>
  z.looseObject({
    type: z.string().optional(),
    properties: z.record(z.string(), SchemaNode).optional(),
    items: SchemaNode.optional(),
  }),
);

const CRDShape = z.looseObject({
  metadata: z.looseObject({ name: z.string(), labels: z.record(z.string(), z.string()).optional() }),
  spec: z.looseObject({
    group: z.string(),
    scope: z.string(),
    names: z.looseObject({ kind: z.string(), listKind: z.string().optional() }),
    versions: z.array(
      z.looseObject({
        name: z.string(),
        served: z.boolean(),
        subresources: z.looseObject({ status: z.unknown().optional() }).optional(),
        schema: z.looseObject({ openAPIV3Schema: SchemaNode }).optional(),
      }),
    ),
  }),
});

/** Fields CAPI v1.12 reads from every InfraMachinePool (or the contract doc requires), with their schema type. */
const REQUIRED_POOL_FIELDS: readonly (readonly [string, string])[] = [
  ['spec.providerIDList', 'array'],
  ['status.ready', 'boolean'],
  ['status.replicas', 'integer'],
  ['status.initialization.provisioned', 'boolean'],
];
/** Needed only with MachinePool Machines. */
const MACHINE_POOL_MACHINES_FIELD: readonly [string, string] = ['status.infrastructureMachineKind', 'string'];
/** Optional fields whose type is checked when present. */
const OPTIONAL_POOL_FIELDS: readonly (readonly [string, string])[] = [['status.conditions', 'array']];

export interface CheckInfraMachinePoolCRDOptions {
  /** Check an InfraMachinePoolTemplate CRD instead of an InfraMachinePool CRD. */
  readonly template?: boolean;
  /** The provider implements MachinePool Machines: `status.infrastructureMachineKind` is required. */
  readonly machinePoolMachines?: boolean;
}

/** Fields whose presence makes CAPI v1.12's MachinePool controller panic when set (README, "Terminal failures"). */
const POOL_FIELDS_THAT_CRASH_CAPI = ['status.failureReason', 'status.failureMessage'];

function nodeAt(root: SchemaNode | undefined, path: string): SchemaNode | undefined {
  let node = root;
  for (const segment of path.split('.')) node = node?.properties?.[segment];
  return node;
}

/**
 * Checks a CRD (a generated object or one read from the API server) against the InfraMachinePool contract as CAPI
 * v1.12 reads it; `template: true` checks an InfraMachinePoolTemplate instead. Returns one sentence per problem,
 * each naming the CRD and what to change; empty when the CRD is fine.
 */
export function checkInfraMachinePoolCRD(crd: unknown, options: CheckInfraMachinePoolCRDOptions = {}): string[] {
  const parsed = CRDShape.safeParse(crd);
  if (!parsed.success) return [`not a CustomResourceDefinition: ${z.prettifyError(parsed.error)}`];
  const { metadata, spec } = parsed.data;
  const name = metadata.name;
  const problems: string[] = [];
  const expectedName = calculateCRDName(spec.group, spec.names.kind);
  if (name !== expectedName) {
    problems.push(`CRD ${name}: CAPI looks it up as ${expectedName} (CalculateCRDName); rename it`);
  }
  if (spec.scope !== 'Namespaced') problems.push(`CRD ${name}: scope is ${spec.scope}; the contract needs Namespaced`);
  if (spec.names.listKind !== undefined && spec.names.listKind !== `${spec.names.kind}List`) {
    problems.push(`CRD ${name}: listKind is ${spec.names.listKind}; the contract needs ${spec.names.kind}List`);
  }
  const served = new Set(spec.versions.filter((version) => version.served).map((version) => version.name));
  const labelValue = metadata.labels?.[CONTRACT_LABEL_KEY];
  if (labelValue === undefined || labelValue === '') {
    problems.push(
      `CRD ${name}: label ${CONTRACT_LABEL_KEY} is missing; CAPI cannot resolve references to ${spec.names.kind}`,
    );
  } else {
    for (const version of labelValue.split('_')) {
      if (!served.has(version)) {
        problems.push(
          `CRD ${name}: label ${CONTRACT_LABEL_KEY} names version ${version}, which the CRD does not serve`,
        );
      }
    }
  }
  for (const version of spec.versions.filter((candidate) => candidate.served)) {
    const root = version.schema?.openAPIV3Schema;
    if (options.template) {
      if (nodeAt(root, 'spec.template.spec')?.type !== 'object') {
        problems.push(`CRD ${name} version ${version.name}: spec.template.spec must be an object (the pool spec)`);
      }
      continue;
    }
    if (version.subresources?.status === undefined) {
      problems.push(`CRD ${name} version ${version.name}: enable the status subresource`);
    }
    const required = options.machinePoolMachines
      ? [...REQUIRED_POOL_FIELDS, MACHINE_POOL_MACHINES_FIELD]
      : REQUIRED_POOL_FIELDS;
    const present = OPTIONAL_POOL_FIELDS.filter(([path]) => nodeAt(root, path) !== undefined);
    for (const [path, type] of [...required, ...present]) {
      const node = nodeAt(root, path);
      if (node?.type !== type) {
        problems.push(
          `CRD ${name} version ${version.name}: ${path} must be in the schema as ${type} (found ${node?.type ?? 'nothing'}); the API server prunes fields it does not know`,
        );
      }
    }
    for (const path of POOL_FIELDS_THAT_CRASH_CAPI) {
      if (nodeAt(root, path) !== undefined) {
        problems.push(
          `CRD ${name} version ${version.name}: ${path} is in the schema; CAPI v1.12's MachinePool controller panics when it is set, report terminal failures in conditions instead`,
        );
      }
    }
  }
  return problems;
}
