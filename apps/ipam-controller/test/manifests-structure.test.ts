import { generatedCRDFiles } from '@tally-ipam/api-types';
import {
  POOL_WEBHOOK_CONFIGURATION_NAME,
  poolWebhookConfiguration,
  withInClusterPoolWebhooks,
} from '@tally-ipam/ipam-provider';
import { withMetal3IPPoolWebhook } from '@tally-ipam/metal3-ipam';
import { describeComponents } from '@tally-ipam/ship/vitest';
import { IPAM_PROVIDER } from '../scripts/render-components.js';

describeComponents(IPAM_PROVIDER, {
  objects: [
    'Namespace/tally-system',
    'CustomResourceDefinition/tallyippools.ipam.cluster.x-k8s.io',
    'CustomResourceDefinition/globaltallyippools.ipam.cluster.x-k8s.io',
    'CustomResourceDefinition/tallyprefixpools.ipam.cluster.x-k8s.io',
    'CustomResourceDefinition/globaltallyprefixpools.ipam.cluster.x-k8s.io',
    'CustomResourceDefinition/tallyaddressledgers.ipam.cluster.x-k8s.io',
    'ServiceAccount/tally-ipam-controller-manager',
    'Role/tally-ipam-leader-election-role',
    'ClusterRole/tally-ipam-manager-role',
    'ClusterRole/tally-ipam-metrics-reader',
    'RoleBinding/tally-ipam-leader-election-rolebinding',
    'ClusterRoleBinding/tally-ipam-manager-rolebinding',
    'Service/tally-ipam-metrics-service',
    'Service/tally-ipam-webhook-service',
    'Deployment/tally-ipam-controller-manager',
    'Issuer/tally-ipam-selfsigned-issuer',
    'Certificate/tally-ipam-serving-cert',
    `ValidatingWebhookConfiguration/${POOL_WEBHOOK_CONFIGURATION_NAME}`,
  ],
  variables: [
    'TALLY_IPAM_LOG_LEVEL',
    'TALLY_IPAM_CONCURRENCY',
    'TALLY_IPAM_ENABLE_METAL3',
    'TALLY_IPAM_ENABLE_IN_CLUSTER',
  ],
  generatedCRDs: generatedCRDFiles().map((file) => file.crd.metadata.name),
  // The pool webhooks, then Metal3's IPPool rule, called only when TALLY_IPAM_ENABLE_METAL3 (default false) is true,
  // then the in-cluster IP pool rules, called only when TALLY_IPAM_ENABLE_IN_CLUSTER (default false) is true.
  webhookConfiguration: (labels, client) =>
    withInClusterPoolWebhooks(
      withMetal3IPPoolWebhook(poolWebhookConfiguration({ labels, client }), {
        client,
        enabledExpression: "'false' == 'true'",
      }),
      { client, enabledExpression: "'false' == 'true'" },
    ),
});
