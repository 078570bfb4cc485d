import { describe, expect, it } from 'vitest';
import {
  CLUSTER_NAME_LABEL,
  IPADDRESSCLAIM_POOL_EXHAUSTED_REASON,
  IPADDRESSCLAIM_READY_CONDITION,
  PAUSED_ANNOTATION,
  parseCluster,
  parseIPAddress,
  parseIPAddressClaim,
  parseMachine,
  parseMachinePool,
} from '../src/index.js';

const claim = {
  apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
  kind: 'IPAddressClaim',
  metadata: {
    name: 'vm-0-0',
    namespace: 'prod',
    labels: { [CLUSTER_NAME_LABEL]: 'prod' },
    managedFields: [{ manager: 'capv', operation: 'Apply' }],
    uid: 'e1c2',
  },
  spec: {
    clusterName: 'prod',
    poolRef: { apiGroup: 'ipam.cluster.x-k8s.io', kind: 'TallyIPPool', name: 'workers-v4' },
    futureField: { nested: [1, 2] },
  },
  status: {
    addressRef: { name: 'vm-0-0' },
    conditions: [
      {
        type: IPADDRESSCLAIM_READY_CONDITION,
        status: 'False',
        reason: IPADDRESSCLAIM_POOL_EXHAUSTED_REASON,
        message: 'no free address',
        lastTransitionTime: '2026-11-22T10:00:00Z',
        observedGeneration: 3,
      },
    ],
    deprecated: { v1beta1: { conditions: [{ type: 'Ready', status: 'False', severity: 'Warning' }] } },
  },
};

describe('CAPI types keep what they do not model', () => {
  it('an IPAddressClaim round-trips unknown fields at every level', () => {
    const result = parseIPAddressClaim(claim);
    expect(result.success).toBe(true);
    if (!result.success) return;
    expect(result.data).toEqual(claim);
    expect(result.data.spec.poolRef.kind).toBe('TallyIPPool');
  });

  it('an IPAddress keeps unknown fields and checks the upstream bounds', () => {
    const address = {
      apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
      kind: 'IPAddress',
      metadata: { name: 'vm-0-0', namespace: 'prod', finalizers: ['ipam.cluster.x-k8s.io/ProtectAddress'] },
      spec: {
        claimRef: { name: 'vm-0-0' },
        poolRef: { apiGroup: 'ipam.cluster.x-k8s.io', kind: 'TallyIPPool', name: 'workers-v4' },
        address: '10.10.0.11',
        prefix: 24,
        gateway: '10.10.0.1',
        dnsServers: ['10.10.0.2'],
      },
    };
    expect(parseIPAddress(address)).toEqual({ success: true, data: address });
    const tooLong = { ...address, spec: { ...address.spec, address: '0000:0000:0000:0000:0000:ffff:255.255.255.255' } };
    const result = parseIPAddress(tooLong);
    expect(result.success).toBe(false);
    if (!result.success) expect(result.error.issues[0]?.path).toBe('spec.address');
  });

  it('a Cluster, a Machine and a MachinePool keep everything Tally does not read', () => {
    const cluster = {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'Cluster',
      metadata: { name: 'prod', namespace: 'prod', annotations: { [PAUSED_ANNOTATION]: '' } },
      spec: { paused: true, topology: { classRef: { name: 'c' } }, clusterNetwork: { pods: { cidrBlocks: ['10/8'] } } },
      status: { initialization: { infrastructureProvisioned: true }, v1beta2: { x: 1 } },
    };
    expect(parseCluster(cluster)).toEqual({ success: true, data: cluster });
    const machine = {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'Machine',
      metadata: { name: 'm', namespace: 'prod' },
      spec: {
        clusterName: 'prod',
        bootstrap: { dataSecretName: 'm-bootstrap' },
        infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'SimMachine', name: 'm' },
        deletion: { nodeDrainTimeoutSeconds: 10 },
      },
      status: { addresses: [{ type: 'InternalIP', address: '10.10.0.11' }], nodeRef: { name: 'n' } },
    };
    expect(parseMachine(machine)).toEqual({ success: true, data: machine });
    const machinePool = {
      apiVersion: 'cluster.x-k8s.io/v1beta2',
      kind: 'MachinePool',
      metadata: { name: 'mp', namespace: 'prod' },
      spec: {
        clusterName: 'prod',
        replicas: 3,
        template: { spec: { ...machine.spec, version: 'v1.34.0' } },
        providerIDList: ['sim://a'],
      },
      status: { replicas: 3, deprecated: { v1beta1: { readyReplicas: 3 } } },
    };
    expect(parseMachinePool(machinePool)).toEqual({ success: true, data: machinePool });
  });

  it('refuses wrong apiVersions and missing required references with their paths', () => {
    const result = parseIPAddressClaim({
      ...claim,
      apiVersion: 'ipam.cluster.x-k8s.io/v1beta1',
      spec: { poolRef: { kind: 'TallyIPPool', name: 'workers-v4' } },
    });
    expect(result.success).toBe(false);
    if (result.success) return;
    expect(result.error.issues.map((issue) => issue.path)).toEqual(['apiVersion', 'spec.poolRef.apiGroup']);
    expect(result.error.issues[0]?.value).toBe('ipam.cluster.x-k8s.io/v1beta1');
  });
});

describe('pool references', () => {
  it('match Tally pools by group and kind, and tell scope and pool type apart', async () => {
    const { isClusterScopedPoolKind, isPrefixPoolKind, isTallyPoolReference } = await import('../src/index.js');
    expect(isTallyPoolReference({ apiGroup: 'ipam.cluster.x-k8s.io', kind: 'TallyIPPool' })).toBe(true);
    expect(isTallyPoolReference({ apiGroup: 'ipam.cluster.x-k8s.io', kind: 'InClusterIPPool' })).toBe(false);
    expect(isTallyPoolReference({ apiGroup: 'ipam.metal3.io', kind: 'TallyIPPool' })).toBe(false);
    expect(isTallyPoolReference({ kind: 'TallyIPPool' })).toBe(false);
    expect(isClusterScopedPoolKind('GlobalTallyPrefixPool')).toBe(true);
    expect(isClusterScopedPoolKind('TallyIPPool')).toBe(false);
    expect(isPrefixPoolKind('TallyPrefixPool')).toBe(true);
    expect(isPrefixPoolKind('GlobalTallyIPPool')).toBe(false);
  });
});
