import type { MachinePool } from '@tally-ipam/api-types';
import { describe, expect, it } from 'vitest';
import {
  bootstrapDataSecretName,
  isBootstrapDataReady,
  isMachinePoolOwned,
  machinePoolMachineLabels,
  machinePoolMachineSelector,
} from '../src/index.js';

function machinePool(dataSecretName?: string): Pick<MachinePool, 'spec'> {
  return {
    spec: {
      clusterName: 'c1',
      template: {
        spec: {
          clusterName: 'c1',
          bootstrap: dataSecretName === undefined ? {} : { dataSecretName },
          infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'SampleMachinePool', name: 'p' },
        },
      },
    },
  };
}

describe('bootstrap data readiness (spec.template.spec.bootstrap.dataSecretName)', () => {
  it('is ready only with a non-empty Secret name', () => {
    expect(isBootstrapDataReady(machinePool('workers-bootstrap'))).toBe(true);
    expect(bootstrapDataSecretName(machinePool('workers-bootstrap'))).toBe('workers-bootstrap');
    expect(isBootstrapDataReady(machinePool(''))).toBe(false);
    expect(isBootstrapDataReady(machinePool())).toBe(false);
    expect(bootstrapDataSecretName(machinePool())).toBeUndefined();
  });
});

describe('MachinePool Machines labels (CAPI selects InfraMachines by them)', () => {
  it('uses spec.clusterName and the formatted pool name', () => {
    const short = { metadata: { name: 'workers' }, spec: { clusterName: 'prod' } };
    expect(machinePoolMachineLabels(short)).toEqual({
      'cluster.x-k8s.io/cluster-name': 'prod',
      'cluster.x-k8s.io/pool-name': 'workers',
    });
    const long = { metadata: { name: 'machineSetName'.repeat(12) }, spec: { clusterName: 'prod' } };
    expect(machinePoolMachineSelector(long)).toBe(
      'cluster.x-k8s.io/cluster-name=prod,cluster.x-k8s.io/pool-name=hash_FR_ghQ_z',
    );
  });
});

describe('isMachinePoolOwned (labels.IsMachinePoolOwned)', () => {
  it('is true with the pool-name label or a MachinePool owner, false otherwise', () => {
    expect(isMachinePoolOwned({ metadata: { name: 'm', labels: { 'cluster.x-k8s.io/pool-name': 'p' } } })).toBe(true);
    expect(
      isMachinePoolOwned({
        metadata: {
          name: 'm',
          ownerReferences: [{ apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'MachinePool', name: 'p', uid: 'u' }],
        },
      }),
    ).toBe(true);
    expect(
      isMachinePoolOwned({
        metadata: {
          name: 'm',
          labels: { 'cluster.x-k8s.io/cluster-name': 'c' },
          ownerReferences: [{ apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Machine', name: 'm', uid: 'u' }],
        },
      }),
    ).toBe(false);
  });
});
