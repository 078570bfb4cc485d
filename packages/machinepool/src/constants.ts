import {
  CLUSTER_GROUP,
  CLUSTER_NAME_LABEL,
  CLUSTER_V1BETA2_API_VERSION,
  DELETE_MACHINE_ANNOTATION,
  DELETING_REASON,
  MACHINE_KIND,
  MACHINEPOOL_KIND,
  MACHINEPOOL_NAME_LABEL,
  READY_CONDITION,
} from '@tally-ipam/api-types';

export { CLUSTER_NAME_LABEL, MACHINEPOOL_NAME_LABEL, READY_CONDITION };

/** The contract version these helpers implement (the CRD label key is `cluster.x-k8s.io/<this>`). */
export const INFRA_MACHINE_POOL_CONTRACT_VERSION = 'v1beta2';
/** The CRD label CAPI reads to learn which of a provider kind's versions implement the contract. */
export const CONTRACT_LABEL_KEY = `${CLUSTER_GROUP}/${INFRA_MACHINE_POOL_CONTRACT_VERSION}`;

/** Re-exported from api-types, their one home: the scale-down annotation the helpers honour. */
/** Core Cluster API kinds, group and version the helpers read and write. */
export { CLUSTER_GROUP, CLUSTER_V1BETA2_API_VERSION, DELETE_MACHINE_ANNOTATION, MACHINE_KIND, MACHINEPOOL_KIND };

/** Limits of `spec.providerIDList` in the contract (`MaxItems=10000`, items `MinLength=1`, `MaxLength=512`). */
export const MAX_PROVIDER_IDS = 10_000;
export const MAX_PROVIDER_ID_LENGTH = 512;

/** Condition types and reasons these helpers write (v1beta2 `metav1.Condition`s). */
// The summary's reasons are the kit's, where the one Ready summary lives.
export { NOT_READY_REASON, READY_REASON, READY_UNKNOWN_REASON } from '@tally-ipam/controller-kit/capi';
export { DELETING_REASON };
/** Condition reporting whether every desired replica exists with a provider ID (CAPD's `ReplicasReady`). */
export const REPLICAS_READY_CONDITION = 'ReplicasReady';
export const REPLICAS_READY_REASON = 'ReplicasReady';
export const WAITING_FOR_REPLICAS_REASON = 'WaitingForReplicas';
/** Reason while `MachinePool.spec.template.spec.bootstrap.dataSecretName` is not set yet. */
export const WAITING_FOR_BOOTSTRAP_DATA_REASON = 'WaitingForBootstrapData';
