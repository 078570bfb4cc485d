import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { checkInfraMachinePoolCRD, infraMachinePoolContractLabels, infraMachinePoolCRDNames } from '../src/index.js';
import { exampleCRDFiles, exampleCustomResourceDefinitions } from './fixtures/example-kinds.js';

const crdDirectory = fileURLToPath(new URL('./fixtures/crds/', import.meta.url));

function clone<T>(value: T): T {
  return structuredClone(value);
}

describe('CRD naming and the contract label', () => {
  it('names the pool and template CRDs as CAPI CalculateCRDName does', () => {
    expect(infraMachinePoolCRDNames('infrastructure.cluster.x-k8s.io', 'DockerMachinePool')).toEqual({
      infraMachinePool: 'dockermachinepools.infrastructure.cluster.x-k8s.io',
      infraMachinePoolTemplate: 'dockermachinepooltemplates.infrastructure.cluster.x-k8s.io',
    });
    expect(infraMachinePoolCRDNames('infrastructure.cluster.x-k8s.io', 'AzureMachinePool').infraMachinePool).toBe(
      'azuremachinepools.infrastructure.cluster.x-k8s.io',
    );
  });

  it('labels CRDs cluster.x-k8s.io/v1beta2 with the served versions joined by "_"', () => {
    expect(infraMachinePoolContractLabels(['v1alpha1'])).toEqual({ 'cluster.x-k8s.io/v1beta2': 'v1alpha1' });
    expect(infraMachinePoolContractLabels(['v1alpha1', 'v1beta1'])).toEqual({
      'cluster.x-k8s.io/v1beta2': 'v1alpha1_v1beta1',
    });
  });
});

describe('checkInfraMachinePoolCRD', () => {
  const [pool, template, machine] = exampleCustomResourceDefinitions();

  it('accepts CRDs built from the contract fields', () => {
    expect(checkInfraMachinePoolCRD(pool, { machinePoolMachines: true })).toEqual([]);
    expect(checkInfraMachinePoolCRD(template, { template: true })).toEqual([]);
    expect(machine?.metadata.labels).toEqual({ 'cluster.x-k8s.io/v1beta2': 'v1alpha1' });
  });

  it('reports a missing or wrong contract label, a wrong name, scope and missing status subresource', () => {
    const broken = clone(pool) as NonNullable<typeof pool>;
    broken.metadata.name = 'examplemachinepool.infrastructure.cluster.x-k8s.io';
    broken.metadata.labels = { 'cluster.x-k8s.io/v1beta2': 'v1beta9' };
    broken.spec.scope = 'Cluster';
    for (const version of broken.spec.versions) delete version.subresources;
    const problems = checkInfraMachinePoolCRD(broken);
    expect(problems).toEqual([
      'CRD examplemachinepool.infrastructure.cluster.x-k8s.io: CAPI looks it up as examplemachinepools.infrastructure.cluster.x-k8s.io (CalculateCRDName); rename it',
      'CRD examplemachinepool.infrastructure.cluster.x-k8s.io: scope is Cluster; the contract needs Namespaced',
      'CRD examplemachinepool.infrastructure.cluster.x-k8s.io: label cluster.x-k8s.io/v1beta2 names version v1beta9, which the CRD does not serve',
      'CRD examplemachinepool.infrastructure.cluster.x-k8s.io version v1alpha1: enable the status subresource',
    ]);
    delete broken.metadata.labels;
    expect(checkInfraMachinePoolCRD(broken)).toContain(
      'CRD examplemachinepool.infrastructure.cluster.x-k8s.io: label cluster.x-k8s.io/v1beta2 is missing; CAPI cannot resolve references to ExampleMachinePool',
    );
  });

  it('reports fields CAPI reads that the schema lacks, and failureReason that crashes CAPI v1.12', () => {
    const broken = clone(pool) as NonNullable<typeof pool>;
    const status = broken.spec.versions[0]?.schema.openAPIV3Schema.properties?.status;
    if (!status?.properties) throw new Error('fixture has no status schema');
    delete status.properties.ready;
    delete status.properties.infrastructureMachineKind;
    status.properties.failureReason = { type: 'string' };
    const problems = checkInfraMachinePoolCRD(broken, { machinePoolMachines: true });
    expect(problems).toEqual([
      'CRD examplemachinepools.infrastructure.cluster.x-k8s.io version v1alpha1: status.ready must be in the schema as boolean (found nothing); the API server prunes fields it does not know',
      'CRD examplemachinepools.infrastructure.cluster.x-k8s.io version v1alpha1: status.infrastructureMachineKind must be in the schema as string (found nothing); the API server prunes fields it does not know',
      "CRD examplemachinepools.infrastructure.cluster.x-k8s.io version v1alpha1: status.failureReason is in the schema; CAPI v1.12's MachinePool controller panics when it is set, report terminal failures in conditions instead",
    ]);
    expect(checkInfraMachinePoolCRD(broken).some((problem) => problem.includes('infrastructureMachineKind'))).toBe(
      false,
    );
  });

  it('reports a template without spec.template.spec and anything that is not a CRD', () => {
    expect(checkInfraMachinePoolCRD(pool, { template: true })).toEqual([
      'CRD examplemachinepools.infrastructure.cluster.x-k8s.io version v1alpha1: spec.template.spec must be an object (the pool spec)',
    ]);
    expect(checkInfraMachinePoolCRD({ kind: 'ConfigMap' })[0]).toMatch(/^not a CustomResourceDefinition: /);
  });
});

describe('test fixtures (run `pnpm --filter @tally-ipam/machinepool gen-fixtures` to update)', () => {
  it('test/fixtures/crds holds exactly the generated CRDs, byte for byte', () => {
    const files = exampleCRDFiles();
    expect(readdirSync(crdDirectory).sort()).toEqual(files.map((file) => file.fileName).sort());
    for (const file of files) expect(readFileSync(`${crdDirectory}${file.fileName}`, 'utf8')).toBe(file.yaml);
  });
});
