/**
 * @tally-ipam/sim-infra: Sim, a simulated Cluster API infrastructure provider (SimCluster, SimMachine and their
 * templates) that takes machine addresses and the control-plane endpoint from any IPAM provider's pools.
 */
export * from './api/v1alpha1/index.js';
export * from './crds.js';
export {
  ADDRESS_RESOURCE,
  CLAIM_RESOURCE,
  CLUSTER_RESOURCE,
  MACHINE_RESOURCE,
  NODE_RESOURCE,
  SECRET_RESOURCE,
  SIM_CLUSTER_RESOURCE,
  SIM_CLUSTER_TEMPLATE_RESOURCE,
  SIM_MACHINE_POOL_RESOURCE,
  SIM_MACHINE_POOL_TEMPLATE_RESOURCE,
  SIM_MACHINE_RESOURCE,
  SIM_MACHINE_TEMPLATE_RESOURCE,
  StoredAddress,
  StoredClaim,
  StoredCluster,
  StoredMachine,
  StoredNode,
  StoredSecret,
} from './resources.js';
export {
  SIM_FIELD_MANAGER,
  type SimInfraProvider,
  type SimInfraProviderOptions,
  setupSimInfraProvider,
} from './setup.js';
export type { SimControllerContext } from './shared.js';
export {
  isExternallyManaged,
  newSimClusterController,
  SimClusterReconciler,
  type SimClusterReconcilerDeps,
} from './simcluster/index.js';
export {
  type DesiredClaim,
  desiredClaims,
  type InstanceOwner,
  newSimMachineController,
  SimMachineClaims,
  SimMachineReconciler,
  type SimMachineReconcilerDeps,
} from './simmachine/index.js';
export {
  newSimMachinePoolController,
  poolInstances,
  SimMachinePoolReconciler,
  type SimMachinePoolReconcilerDeps,
} from './simmachinepool/index.js';
export {
  newSimMachineTemplateController,
  SimMachineTemplateReconciler,
  type SimMachineTemplateReconcilerDeps,
} from './simmachinetemplate/index.js';
export {
  DEFAULT_KUBELET_VERSION,
  deregisterNode,
  KUBECONFIG_SECRET_KEY,
  kubeconfigSecretName,
  NODE_LEASE_DURATION_SECONDS,
  NODE_LEASE_NAMESPACE,
  NODE_LEASE_RENEW_INTERVAL_MS,
  NodeNameTakenError,
  type NodeRegistration,
  registerNode,
  renewNodeLease,
  WorkloadClusters,
} from './simulated-cloud.js';
export {
  controlPlaneEndpointClaimName,
  deviceToken,
  ipAddressClaimName,
  MAX_OBJECT_NAME_LENGTH,
  shortenName,
} from './util/claim-name.js';
export {
  type ClaimProgress,
  type ConditionVerdict,
  conditionOf,
  ipAddressesCondition,
} from './util/conditions.js';
export { simInstanceAutoscaleStatus } from './util/instance-size.js';
export {
  type AddressValidation,
  type ClaimedAddress,
  type DeviceAddresses,
  validateClaimedAddresses,
} from './util/ip-addresses.js';
export { simProviderID } from './util/provider-id.js';
export {
  isTopologyDryRun,
  registerSimWebhooks,
  SIM_TEMPLATE_WEBHOOKS,
  simValidatingWebhookSpecs,
  type TemplateWebhook,
  templateImmutabilityHandler,
} from './webhooks/template-immutability.js';
