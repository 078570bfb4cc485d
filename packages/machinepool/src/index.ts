/**
 * @tally-ipam/machinepool: helpers for Cluster API's InfraMachinePool contract (v1beta2) as CAPI v1.12's MachinePool
 * controller reads it, MachinePool Machines included. See the README for the rule each helper serves.
 */
export {
  type AutoscaleFromZeroInput,
  type AutoscaleFromZeroStatus,
  autoscaleFromZeroStatus,
  autoscaleFromZeroStatusFields,
  canScaleFromZero,
  formatBytes,
  formatMillicores,
  type InstanceSize,
  InstanceSizeError,
  MAX_CAPACITY_RESOURCES,
  NODE_ARCHITECTURES,
  type NodeArchitecture,
  NodeCapacity,
  NodeInfo,
  QUANTITY_PATTERN,
  RESOURCE_NAME_PATTERN,
  ResourceQuantity,
} from './autoscale-from-zero.js';
export { bootstrapDataSecretName, isBootstrapDataReady } from './bootstrap.js';
export {
  CLUSTER_GROUP,
  CLUSTER_NAME_LABEL,
  CLUSTER_V1BETA2_API_VERSION,
  CONTRACT_LABEL_KEY,
  DELETE_MACHINE_ANNOTATION,
  DELETING_REASON,
  INFRA_MACHINE_POOL_CONTRACT_VERSION,
  MACHINE_KIND,
  MACHINEPOOL_KIND,
  MACHINEPOOL_NAME_LABEL,
  MAX_PROVIDER_ID_LENGTH,
  MAX_PROVIDER_IDS,
  NOT_READY_REASON,
  READY_CONDITION,
  READY_REASON,
  READY_UNKNOWN_REASON,
  REPLICAS_READY_CONDITION,
  REPLICAS_READY_REASON,
  WAITING_FOR_BOOTSTRAP_DATA_REASON,
  WAITING_FOR_REPLICAS_REASON,
} from './constants.js';
export {
  InfraMachineObject,
  InfraMachinePoolInitialization,
  InfraMachinePoolInstanceStatus,
  InfraMachinePoolObject,
  infraMachinePoolSpecFields,
  infraMachinePoolStatusFields,
  infraMachineSpecFields,
  infraMachineStatusFields,
  ProviderID,
  ProviderIDList,
} from './contract-fields.js';
export {
  type CheckInfraMachinePoolCRDOptions,
  checkInfraMachinePoolCRD,
  infraMachinePoolContractLabels,
  infraMachinePoolCRDNames,
} from './crd.js';
export {
  fnv1a32,
  formatLabelValue,
  isValidLabelValue,
  labelValueMatches,
  MAX_LABEL_VALUE_LENGTH,
} from './label-format.js';
export {
  type DeleteMachinePoolMachinesInput,
  type DeleteMachinePoolMachinesResult,
  type DesiredInfraMachineInput,
  deleteMachinePoolMachines,
  desiredInfraMachine,
  type InfraMachineApplyConfiguration,
  type MachinePoolIdentity,
  machinePoolMachineLabels,
  machinePoolMachineSelector,
  type ReconcileMachinePoolMachinesInput,
  type ReconcileMachinePoolMachinesResult,
  reconcileMachinePoolMachines,
} from './machine-pool-machines.js';
export { conditionsOf } from './object-conditions.js';
export {
  getClusterByLabel,
  getMachinePoolByLabels,
  getOwnerMachine,
  getOwnerMachinePool,
  isMachinePoolOwned,
} from './owners.js';
export {
  type EnsurePausedConditionInput,
  type EnsurePausedConditionResult,
  ensurePausedCondition,
  pausedConditionChanged,
} from './pause.js';
export {
  DEFAULT_MACHINE_POOL_REPLICAS,
  machinePoolStatusFromInstances,
  type PoolContractState,
  type PoolInstance,
  PoolInstancesError,
  type PoolStatusInput,
} from './pool-status.js';
export {
  compareCodePoints,
  normalizeProviderIDList,
  ProviderIDListError,
  providerIDListsEqual,
} from './provider-ids.js';
export { isInfraMachinePoolProvisioned, type ProvisionedStatus, provisionedStatus } from './provisioned.js';
export { type ReadySummaryInput, summarizeReadyCondition, type TerminalFailure } from './ready-condition.js';
export {
  CLUSTER_RESOURCE,
  MACHINE_POOL_RESOURCE,
  MACHINE_RESOURCE,
  StoredCluster,
  StoredMachine,
  StoredMachinePool,
} from './resources.js';
export { type DeletionPreference, newestFirst, type ScaleDownCandidate, selectReplicasToDelete } from './scale-down.js';
export { type WritePoolStateInput, type WritePoolStateResult, writeInfraMachinePoolState } from './write-state.js';
