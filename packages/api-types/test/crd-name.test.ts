import { describe, expect, it } from 'vitest';
import { calculateCRDName, pluralize } from '../src/index.js';

describe('calculateCRDName (CAPI util/contract.CalculateCRDName)', () => {
  it.each([
    ['cluster.x-k8s.io', 'Cluster', 'clusters.cluster.x-k8s.io'],
    ['cluster.x-k8s.io', 'Machine', 'machines.cluster.x-k8s.io'],
    ['cluster.x-k8s.io', 'MachinePool', 'machinepools.cluster.x-k8s.io'],
    ['cluster.x-k8s.io', 'MachineSet', 'machinesets.cluster.x-k8s.io'],
    ['cluster.x-k8s.io', 'MachineDeployment', 'machinedeployments.cluster.x-k8s.io'],
    ['cluster.x-k8s.io', 'MachineHealthCheck', 'machinehealthchecks.cluster.x-k8s.io'],
    ['cluster.x-k8s.io', 'ClusterClass', 'clusterclasses.cluster.x-k8s.io'],
    ['cluster.x-k8s.io', 'MachinePolicy', 'machinepolicies.cluster.x-k8s.io'],
    ['cluster.x-k8s.io', 'MachineDrainRule', 'machinedrainrules.cluster.x-k8s.io'],
    ['ipam.cluster.x-k8s.io', 'IPAddress', 'ipaddresses.ipam.cluster.x-k8s.io'],
    ['ipam.cluster.x-k8s.io', 'IPAddressClaim', 'ipaddressclaims.ipam.cluster.x-k8s.io'],
    ['ipam.cluster.x-k8s.io', 'InClusterIPPool', 'inclusterippools.ipam.cluster.x-k8s.io'],
    ['ipam.cluster.x-k8s.io', 'GlobalInClusterIPPool', 'globalinclusterippools.ipam.cluster.x-k8s.io'],
    ['ipam.cluster.x-k8s.io', 'TallyIPPool', 'tallyippools.ipam.cluster.x-k8s.io'],
    ['ipam.cluster.x-k8s.io', 'GlobalTallyPrefixPool', 'globaltallyprefixpools.ipam.cluster.x-k8s.io'],
    ['infrastructure.cluster.x-k8s.io', 'DockerMachine', 'dockermachines.infrastructure.cluster.x-k8s.io'],
    [
      'infrastructure.cluster.x-k8s.io',
      'DockerMachineTemplate',
      'dockermachinetemplates.infrastructure.cluster.x-k8s.io',
    ],
    ['infrastructure.cluster.x-k8s.io', 'AWSMachinePool', 'awsmachinepools.infrastructure.cluster.x-k8s.io'],
    ['infrastructure.cluster.x-k8s.io', 'SimMachinePool', 'simmachinepools.infrastructure.cluster.x-k8s.io'],
    ['controlplane.cluster.x-k8s.io', 'KubeadmControlPlane', 'kubeadmcontrolplanes.controlplane.cluster.x-k8s.io'],
    ['addons.cluster.x-k8s.io', 'ClusterResourceSetBinding', 'clusterresourcesetbindings.addons.cluster.x-k8s.io'],
    ['runtime.cluster.x-k8s.io', 'ExtensionConfig', 'extensionconfigs.runtime.cluster.x-k8s.io'],
    ['ipam.metal3.io', 'IPPool', 'ippools.ipam.metal3.io'],
  ])('%s %s → %s', (group, kind, expected) => {
    expect(calculateCRDName(group, kind)).toBe(expected);
  });
});

describe('pluralize (flect rules)', () => {
  it.each([
    ['policy', 'policies'],
    ['key', 'keys'],
    ['day', 'days'],
    ['toy', 'toys'],
    ['class', 'classes'],
    ['status', 'statuses'],
    ['box', 'boxes'],
    ['match', 'matches'],
    ['mesh', 'meshes'],
    ['quiz', 'quizzes'],
    ['leaf', 'leaves'],
    ['knife', 'knives'],
    ['wolf', 'wolves'],
    ['index', 'indices'],
    ['matrix', 'matrices'],
    ['analysis', 'analyses'],
    ['criterion', 'criteria'],
    ['person', 'people'],
    ['child', 'children'],
    ['salesperson', 'salespeople'],
    ['woman', 'women'],
    ['sheep', 'sheep'],
    ['equipment', 'equipment'],
    ['photo', 'photos'],
    ['potato', 'potatoes'],
    ['radio', 'radios'],
    ['alias', 'aliases'],
    ['bus', 'buses'],
    ['datum', 'data'],
    ['medium', 'media'],
    ['users', 'users'],
    ['ip', 'ips'],
    ['vm', 'vms'],
    ['dns', 'dnses'],
    ['movie', 'movies'],
    ['house', 'houses'],
    ['ox', 'oxen'],
    ['box2', 'box2s'],
  ])('%s → %s', (word, plural) => {
    expect(pluralize(word)).toBe(plural);
  });

  it('refuses what CAPI would never pass (mixed case, separators, empty)', () => {
    for (const word of ['', 'Machine', 'machine pool', 'ip-pool']) {
      expect(() => pluralize(word)).toThrow(/one lower-case word/);
    }
  });
});

describe('contractVersionLabel', () => {
  it('joins the served versions with "_" under cluster.x-k8s.io/<contract>', async () => {
    const { contractVersionLabel } = await import('../src/index.js');
    expect(contractVersionLabel('v1beta2', ['v1alpha1'])).toEqual({ 'cluster.x-k8s.io/v1beta2': 'v1alpha1' });
    expect(contractVersionLabel('v1beta1', ['v1alpha3', 'v1alpha4'])).toEqual({
      'cluster.x-k8s.io/v1beta1': 'v1alpha3_v1alpha4',
    });
    expect(() => contractVersionLabel('v1beta2', [])).toThrow(/at least one served version/);
  });
});
