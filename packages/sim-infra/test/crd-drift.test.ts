import { readdirSync, readFileSync } from 'node:fs';
import { calculateCRDName } from '@tally-ipam/api-types';
import { checkInfraMachinePoolCRD } from '@tally-ipam/machinepool';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { generatedSimCRDFiles, SIM_GROUP, SIM_V1ALPHA1_VERSION, simCRDDirectory, simCRDsYaml } from '../src/index.js';

const crdDir = simCRDDirectory();

describe('committed Sim CRDs match the zod schemas (run `pnpm --filter @tally-ipam/sim-infra gen-crds` to update)', () => {
  const generated = generatedSimCRDFiles();

  it('config/crd holds exactly the generated files', () => {
    const committed = readdirSync(crdDir)
      .filter((name) => name.endsWith('.yaml'))
      .sort();
    expect(committed).toEqual(generated.map((file) => file.fileName).sort());
  });

  it.each(generated.map((file) => [file.fileName, file] as const))('%s is byte-identical to a fresh run', (_, file) => {
    expect(readFileSync(`${crdDir}${file.fileName}`, 'utf8')).toBe(file.yaml);
  });

  it('the YAML round-trips to the CRD objects and the stream holds all of them', () => {
    for (const file of generated) expect(parse(file.yaml)).toEqual(file.crd);
    const documents = simCRDsYaml()
      .split(/^---\n/m)
      .filter((document) => document.trim() !== '');
    expect(documents.map((document) => (parse(document) as { metadata: { name: string } }).metadata.name)).toEqual(
      generated.map((file) => file.crd.metadata.name),
    );
  });

  it('every CRD is named as CAPI computes it and carries the v1beta2 contract and provider labels', () => {
    expect(generated.map((file) => file.crd.spec.names.kind).sort()).toEqual([
      'SimCluster',
      'SimClusterTemplate',
      'SimMachine',
      'SimMachinePool',
      'SimMachinePoolTemplate',
      'SimMachineTemplate',
    ]);
    for (const { crd } of generated) {
      expect(crd.metadata.name).toBe(calculateCRDName(SIM_GROUP, crd.spec.names.kind));
      expect(crd.metadata.labels).toEqual({
        'cluster.x-k8s.io/v1beta2': SIM_V1ALPHA1_VERSION,
        'cluster.x-k8s.io/provider': 'infrastructure-sim',
      });
      expect(crd.spec.scope).toBe('Namespaced');
      expect(crd.spec.versions.map((version) => version.name)).toEqual([SIM_V1ALPHA1_VERSION]);
      const isTemplate = crd.spec.names.kind.endsWith('Template');
      expect(crd.spec.versions[0]?.subresources).toEqual(isTemplate ? undefined : { status: {} });
    }
  });

  it('the SimMachinePool CRD has every field CAPI v1.12 reads of an InfraMachinePool', () => {
    const pool = generated.find((file) => file.crd.spec.names.kind === 'SimMachinePool');
    expect(checkInfraMachinePoolCRD(pool?.crd)).toEqual([]);
  });
});
