import { validatingWebhookConfiguration } from '@tally-ipam/controller-kit/webhook';
import { at, defaultManifests, only } from '@tally-ipam/ship';
import { describeComponents } from '@tally-ipam/ship/vitest';
import { generatedSimCRDFiles, SIM_GROUP, simValidatingWebhookSpecs } from '@tally-ipam/sim-infra';
import { describe, expect, it } from 'vitest';
import { SIM_PROVIDER } from '../scripts/render-components.js';

const WEBHOOK_CONFIGURATION_NAME = 'sim-infra-validating-webhook-configuration';

describeComponents(SIM_PROVIDER, {
  objects: [
    'Namespace/sim-system',
    'CustomResourceDefinition/simclusters.infrastructure.cluster.x-k8s.io',
    'CustomResourceDefinition/simclustertemplates.infrastructure.cluster.x-k8s.io',
    'CustomResourceDefinition/simmachines.infrastructure.cluster.x-k8s.io',
    'CustomResourceDefinition/simmachinetemplates.infrastructure.cluster.x-k8s.io',
    'CustomResourceDefinition/simmachinepools.infrastructure.cluster.x-k8s.io',
    'CustomResourceDefinition/simmachinepooltemplates.infrastructure.cluster.x-k8s.io',
    'ServiceAccount/sim-infra-controller-manager',
    'Role/sim-infra-leader-election-role',
    'ClusterRole/sim-infra-manager-role',
    'ClusterRole/capi-infrastructure-sim',
    'ClusterRole/sim-infra-metrics-reader',
    'RoleBinding/sim-infra-leader-election-rolebinding',
    'ClusterRoleBinding/sim-infra-manager-rolebinding',
    'Service/sim-infra-metrics-service',
    'Service/sim-infra-webhook-service',
    'Deployment/sim-infra-controller-manager',
    'Issuer/sim-infra-selfsigned-issuer',
    'Certificate/sim-infra-serving-cert',
    `ValidatingWebhookConfiguration/${WEBHOOK_CONFIGURATION_NAME}`,
  ],
  variables: ['SIM_INFRA_LOG_LEVEL', 'SIM_INFRA_CONCURRENCY'],
  generatedCRDs: generatedSimCRDFiles().map((file) => file.crd.metadata.name),
  webhookConfiguration: (labels, client) =>
    validatingWebhookConfiguration({
      name: WEBHOOK_CONFIGURATION_NAME,
      labels,
      client,
      webhooks: simValidatingWebhookSpecs(),
    }),
});

describe('Sim RBAC in the components', () => {
  const manifests = defaultManifests(SIM_PROVIDER);

  it('aggregates the CAPI role into the Cluster API manager without a binding, and binds only the controller role', () => {
    const aggregated = only(manifests, 'ClusterRole', 'capi-infrastructure-sim');
    expect(aggregated.metadata.labels?.['cluster.x-k8s.io/aggregate-to-manager']).toBe('true');
    const bound = manifests.filter((m) => m.kind.endsWith('RoleBinding')).map((m) => at(m, 'roleRef', 'name'));
    expect(bound.sort()).toEqual(['sim-infra-leader-election-role', 'sim-infra-manager-role']);
  });

  it('grants Leases only in the controller namespace, never cluster-wide', () => {
    const clusterRoles = manifests.filter((m) => m.kind === 'ClusterRole');
    for (const role of clusterRoles) {
      const rules = at(role, 'rules') as { resources: string[] }[];
      expect(
        rules.flatMap((rule) => rule.resources),
        role.metadata.name,
      ).not.toContain('leases');
    }
    expect(only(manifests, 'Role').metadata.namespace).toBe('sim-system');
  });

  it('covers every generated Sim CRD in the aggregated role (CAPI clones templates and adopts every kind)', () => {
    const aggregated = only(manifests, 'ClusterRole', 'capi-infrastructure-sim');
    const rules = at(aggregated, 'rules') as { apiGroups: string[]; resources: string[] }[];
    const granted = rules.filter((rule) => rule.apiGroups.includes(SIM_GROUP)).flatMap((rule) => rule.resources);
    expect(granted.sort()).toEqual(
      generatedSimCRDFiles()
        .map((file) => file.crd.spec.names.plural)
        .sort(),
    );
  });
});
