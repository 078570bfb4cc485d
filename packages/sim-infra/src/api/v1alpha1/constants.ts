/** API group of the Sim kinds: the conventional infrastructure group, which CAPI's core role already covers. */
export const SIM_GROUP = 'infrastructure.cluster.x-k8s.io';
export const SIM_V1ALPHA1_VERSION = 'v1alpha1';
export const SIM_V1ALPHA1_API_VERSION = `${SIM_GROUP}/${SIM_V1ALPHA1_VERSION}`;

/** clusterctl provider name (`<type>-<name>`), also the `cluster.x-k8s.io/provider` label value on every CRD. */
export const SIM_PROVIDER_NAME = 'infrastructure-sim';

export const SIM_CLUSTER_KIND = 'SimCluster';
export const SIM_CLUSTER_TEMPLATE_KIND = 'SimClusterTemplate';
export const SIM_MACHINE_KIND = 'SimMachine';
export const SIM_MACHINE_TEMPLATE_KIND = 'SimMachineTemplate';
export const SIM_MACHINE_POOL_KIND = 'SimMachinePool';
export const SIM_MACHINE_POOL_TEMPLATE_KIND = 'SimMachinePoolTemplate';

/** Finalizers follow CAPI's `<kind>.<group>` pattern (`dockercluster.infrastructure.cluster.x-k8s.io`). */
export const SIM_CLUSTER_FINALIZER = `simcluster.${SIM_GROUP}`;
export const SIM_MACHINE_FINALIZER = `simmachine.${SIM_GROUP}`;
export const SIM_MACHINE_POOL_FINALIZER = `simmachinepool.${SIM_GROUP}`;

/** The scheme of every provider ID this provider hands out: `sim://<namespace>/<name>`. */
export const SIM_PROVIDER_ID_SCHEME = 'sim';

/** Port written into `spec.controlPlaneEndpoint` when the endpoint comes from an IPAM pool and no port is given. */
export const DEFAULT_CONTROL_PLANE_PORT = 6443;

// Condition types. `Ready` and `Paused` are CAPI's; CAPI mirrors `Ready` into the owner's `InfrastructureReady`.
export { READY_CONDITION } from '@tally-ipam/api-types';
/** SimCluster: the control-plane endpoint is known (given, from the Cluster, or allocated from IPAM). */
export const CONTROL_PLANE_ENDPOINT_READY_CONDITION = 'ControlPlaneEndpointReady';
/** SimMachine: every IPAddressClaim is bound to a valid IPAddress (CAPV's `IPAddressClaimsFulfilled`). */
export const IP_ADDRESSES_READY_CONDITION = 'IPAddressesReady';
/** SimMachine: the simulated instance exists (`spec.providerID` set, `status.initialization.provisioned`). */
export const INSTANCE_PROVISIONED_CONDITION = 'InstanceProvisioned';
/** SimMachine: the simulated kubelet registered a Ready Node with the machine's provider ID. */
export const NODE_PROVISIONED_CONDITION = 'NodeProvisioned';

// CAPI's generic reason while an object is deleted, defined once in api-types.
export { DELETING_REASON } from '@tally-ipam/api-types';
// Reasons (CamelCase, metav1.Condition's pattern). Generic ones are CAPI's names (`api/core/v1beta2`).
// The Ready summary's reasons are controller-kit's, where the one summary lives.
export { NOT_READY_REASON, READY_REASON } from '@tally-ipam/controller-kit/capi';
export const PROVISIONED_REASON = 'Provisioned';
export const WAITING_FOR_CLUSTER_INFRASTRUCTURE_REASON = 'WaitingForClusterInfrastructureReady';
export const WAITING_FOR_BOOTSTRAP_DATA_REASON = 'WaitingForBootstrapData';
export const WAITING_FOR_OWNER_REASON = 'WaitingForOwner';
export const WAITING_FOR_IP_ADDRESSES_REASON = 'WaitingForIPAddresses';

export const ENDPOINT_FROM_SPEC_REASON = 'EndpointFromSpec';
export const ENDPOINT_FROM_CLUSTER_REASON = 'EndpointFromCluster';
export const ENDPOINT_ALLOCATED_REASON = 'EndpointAllocated';
export const WAITING_FOR_CONTROL_PLANE_ENDPOINT_REASON = 'WaitingForControlPlaneEndpoint';

export const IP_ADDRESSES_ALLOCATED_REASON = 'IPAddressesAllocated';
export const NO_IP_ADDRESSES_REQUESTED_REASON = 'NoIPAddressesRequested';
export const IP_ADDRESS_CLAIMS_BEING_CREATED_REASON = 'IPAddressClaimsBeingCreated';
export const WAITING_FOR_IP_ADDRESS_REASON = 'WaitingForIPAddress';
export const IP_ADDRESS_CLAIM_FAILED_REASON = 'IPAddressClaimFailed';
export const IP_ADDRESS_INVALID_REASON = 'IPAddressInvalid';
export const IP_ADDRESS_CLAIM_CONFLICT_REASON = 'IPAddressClaimConflict';

export const NODE_READY_REASON = 'NodeReady';
export const WAITING_FOR_MACHINE_POOL_REASON = 'WaitingForMachinePool';
export const WAITING_FOR_KUBECONFIG_REASON = 'WaitingForKubeconfig';
export const WAITING_FOR_INSTANCE_REASON = 'WaitingForInstance';
export const NODE_REGISTRATION_FAILED_REASON = 'NodeRegistrationFailed';

/** Annotation CAPI's topology controller puts on objects it sends as a server-side-apply dry run. */
export const TOPOLOGY_DRY_RUN_ANNOTATION = 'topology.cluster.x-k8s.io/dry-run';

/** The simulated size of an instance whose spec names none. */
export const DEFAULT_SIM_INSTANCE_SIZE = { cpus: 2, memoryMiB: 4096 } as const;
/** What every simulated Node runs: reported by its kubelet and announced for autoscaling from zero. */
export const SIM_NODE_ARCHITECTURE = 'amd64';
export const SIM_NODE_OPERATING_SYSTEM = 'linux';
/** Pods per simulated Node: kubelet's default `maxPods`. */
export const SIM_NODE_MAX_PODS = 110;
