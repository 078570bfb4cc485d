import { calculateCRDName, diffCRDs } from '@tally-ipam/api-types';
import { checkInfraMachinePoolCRD } from '@tally-ipam/machinepool';
import { describe, expect, it } from 'vitest';
import { generatedSimCRDFiles, SIM_GROUP, SIM_V1ALPHA1_VERSION, simCRDDirectory } from '../src/index.js';

describe('committed Sim CRDs match the zod schemas (run `pnpm --filter @tally-ipam/sim-infra gen-crds` to update)', () => {
  const generated = generatedSimCRDFiles();

  it('config/crd holds exactly the generated files, byte for byte', async () => {
    expect(await diffCRDs(simCRDDirectory(), generated)).toEqual({ changed: [], stale: [] });
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
      // Templates have no status, except SimMachineTemplate's autoscale-from-zero capacity.
      const hasStatus = !crd.spec.names.kind.endsWith('Template') || crd.spec.names.kind === 'SimMachineTemplate';
      expect(crd.spec.versions[0]?.subresources).toEqual(hasStatus ? { status: {} } : undefined);
    }
  });

  it('the SimMachinePool CRD has every field CAPI v1.12 reads of an InfraMachinePool', () => {
    const pool = generated.find((file) => file.crd.spec.names.kind === 'SimMachinePool');
    expect(checkInfraMachinePoolCRD(pool?.crd)).toEqual([]);
  });
});
