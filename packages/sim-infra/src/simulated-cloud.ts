import { KubeConfig } from '@kubernetes/client-node';
import { Client, isNotFound, microTime } from '@tally-ipam/controller-kit/client';
import { LEASE_RESOURCE } from '@tally-ipam/controller-kit/manager';
import type { Logger } from 'pino';
import { SIM_NODE_ARCHITECTURE, SIM_NODE_MAX_PODS, SIM_NODE_OPERATING_SYSTEM } from './api/v1alpha1/constants.js';
import { NODE_RESOURCE, SECRET_RESOURCE, type StoredNode, type StoredSecret } from './resources.js';

/** Key of the kubeconfig in the `<cluster>-kubeconfig` Secret (`util/secret/consts.go`: `KubeconfigDataName`). */
export const KUBECONFIG_SECRET_KEY = 'value';
/** Kubelet version a simulated Node reports when its Machine names none. */
export const DEFAULT_KUBELET_VERSION = 'v1.34.0';
const CONTROL_PLANE_NODE_ROLE_LABEL = 'node-role.kubernetes.io/control-plane';
/** Where kubelets keep their heartbeat Leases (one per Node, named after it). */
export const NODE_LEASE_NAMESPACE = 'kube-node-lease';
/** Kubelet's default `nodeLeaseDurationSeconds`. */
export const NODE_LEASE_DURATION_SECONDS = 40;
/** How often the simulated kubelet renews the Lease: kubelet renews every quarter of the duration (10 s). */
export const NODE_LEASE_RENEW_INTERVAL_MS = (NODE_LEASE_DURATION_SECONDS * 1000) / 4;

/** The name of the Secret holding a cluster's admin kubeconfig (`<cluster>-kubeconfig`, as Cluster API names it). */
export function kubeconfigSecretName(clusterName: string): string {
  return `${clusterName}-kubeconfig`;
}

/** A Node name already carries another instance's provider ID: the simulated kubelet will not take it over. */
export class NodeNameTakenError extends Error {
  override readonly name = 'NodeNameTakenError';
}

/** What the simulated kubelet registers for one instance. */
export interface NodeRegistration {
  readonly name: string;
  readonly providerID: string;
  readonly kubeletVersion?: string | undefined;
  readonly internalIPs: readonly string[];
  readonly controlPlane: boolean;
  /** The instance's resources (`cpu`, `memory`), reported as the Node's capacity and allocatable. */
  readonly capacity: Readonly<Record<string, string>>;
}

interface CachedWorkloadClient {
  readonly secretVersion: string;
  readonly client: Client;
}

/**
 * Clients for the workload clusters, built from each cluster's `<cluster>-kubeconfig` Secret (key `value`) — the way
 * Cluster API's ClusterCache reaches them. The kubeconfig may point back at the management API server (a simulated
 * cluster usually does). A client is rebuilt when the Secret changes, so a rotated kubeconfig is picked up.
 */
export class WorkloadClusters {
  readonly #clients = new Map<string, CachedWorkloadClient>();

  constructor(
    private readonly management: Client,
    private readonly fieldManager: string,
    private readonly logger: Logger,
  ) {}

  /** The workload cluster's client; undefined while the kubeconfig Secret does not exist. */
  async clientFor(namespace: string, clusterName: string, signal?: AbortSignal): Promise<Client | undefined> {
    const secretName = kubeconfigSecretName(clusterName);
    let secret: StoredSecret;
    try {
      secret = await this.management.get(SECRET_RESOURCE, { namespace, name: secretName }, { signal });
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
    const key = `${namespace}/${clusterName}`;
    const version = secret.metadata.resourceVersion ?? '';
    const cached = this.#clients.get(key);
    if (cached && cached.secretVersion === version) return cached.client;
    const encoded = secret.data?.[KUBECONFIG_SECRET_KEY];
    if (!encoded) {
      throw new Error(
        `Secret ${namespace}/${secretName} has no data.${KUBECONFIG_SECRET_KEY}: Cluster API and the simulated cloud read the workload kubeconfig from that key`,
      );
    }
    const kubeConfig = new KubeConfig();
    try {
      kubeConfig.loadFromString(Buffer.from(encoded, 'base64').toString('utf8'));
    } catch (error) {
      throw new Error(`Secret ${namespace}/${secretName}: data.${KUBECONFIG_SECRET_KEY} is not a kubeconfig`, {
        cause: error,
      });
    }
    cached?.client.close();
    const client = new Client(kubeConfig, { fieldManager: this.fieldManager });
    this.#clients.set(key, { secretVersion: version, client });
    this.logger.debug(
      { cluster: key, server: kubeConfig.getCurrentCluster()?.server },
      'workload cluster client built',
    );
    return client;
  }

  close(): void {
    for (const cached of this.#clients.values()) cached.client.close();
    this.#clients.clear();
  }
}

function nodeIsReady(node: StoredNode): boolean {
  return (
    node.status?.conditions?.some((condition) => condition.type === 'Ready' && condition.status === 'True') ?? false
  );
}

/**
 * Plays kubelet (and the cloud provider's node controller) for one instance: creates the Node with the instance's
 * provider ID and marks it Ready through the status subresource, with the pressure conditions False as a healthy
 * kubelet reports them — what CAPI's Machine controller needs for `nodeRef` and `NodeHealthy`. Idempotent: a Node that
 * exists with the same provider ID is only brought to Ready when it is not. A Node of that name with another provider
 * ID is never touched: Nodes are cluster-scoped, and a shared API server may hold several simulated clusters.
 */
export async function registerNode(
  workload: Client,
  registration: NodeRegistration,
  now: Date,
  signal?: AbortSignal,
): Promise<StoredNode> {
  let node: StoredNode;
  try {
    node = await workload.get(NODE_RESOURCE, { name: registration.name }, { signal });
  } catch (error) {
    if (!isNotFound(error)) throw error;
    const labels: Record<string, string> = {
      'kubernetes.io/hostname': registration.name,
      'kubernetes.io/os': SIM_NODE_OPERATING_SYSTEM,
      'kubernetes.io/arch': SIM_NODE_ARCHITECTURE,
    };
    if (registration.controlPlane) labels[CONTROL_PLANE_NODE_ROLE_LABEL] = '';
    node = await workload.create(
      NODE_RESOURCE,
      { metadata: { name: registration.name, labels }, spec: { providerID: registration.providerID } },
      { signal },
    );
  }
  if (node.spec?.providerID !== registration.providerID) {
    throw new NodeNameTakenError(
      `Node ${registration.name} exists with providerID ${JSON.stringify(node.spec?.providerID ?? '')}, not ${registration.providerID}; rename the machine or delete the stale Node`,
    );
  }
  await renewNodeLease(workload, node, now, signal);
  if (nodeIsReady(node)) return node;
  const time = `${now.toISOString().slice(0, 19)}Z`;
  const nodeResources = { ...registration.capacity, pods: String(SIM_NODE_MAX_PODS) };
  const condition = (type: string, status: 'True' | 'False', reason: string, message: string) => ({
    type,
    status,
    reason,
    message,
    lastHeartbeatTime: time,
    lastTransitionTime: time,
  });
  return workload.mergePatch(
    NODE_RESOURCE,
    { name: registration.name },
    {
      status: {
        conditions: [
          condition('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'),
          condition('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
          condition('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
          condition('Ready', 'True', 'KubeletReady', 'simulated kubelet is posting ready status'),
        ],
        addresses: [
          ...registration.internalIPs.map((address) => ({ type: 'InternalIP', address })),
          { type: 'Hostname', address: registration.name },
        ],
        capacity: nodeResources,
        allocatable: nodeResources,
        nodeInfo: {
          kubeletVersion: registration.kubeletVersion ?? DEFAULT_KUBELET_VERSION,
          kubeProxyVersion: registration.kubeletVersion ?? DEFAULT_KUBELET_VERSION,
          operatingSystem: SIM_NODE_OPERATING_SYSTEM,
          architecture: SIM_NODE_ARCHITECTURE,
          osImage: 'Sim Linux',
          kernelVersion: '6.12.0-sim',
          containerRuntimeVersion: 'sim://1.0.0',
          machineID: '',
          systemUUID: '',
          bootID: '',
        },
      },
    },
    { subresource: 'status', signal },
  );
}

/**
 * The heartbeat a kubelet keeps: Lease `kube-node-lease/<node>` (holder = the Node, owned by it) renewed to `now`.
 * Without it a cluster running kube-controller-manager's node lifecycle controller (kind, any real cluster) turns the
 * Node's `Ready` to Unknown after its grace period and taints it unreachable, and MachinePools stop counting it ready.
 */
export async function renewNodeLease(
  workload: Client,
  node: StoredNode,
  now: Date,
  signal?: AbortSignal,
): Promise<void> {
  const key = { namespace: NODE_LEASE_NAMESPACE, name: node.metadata.name };
  try {
    await workload.get(LEASE_RESOURCE, key, { signal });
  } catch (error) {
    if (!isNotFound(error)) throw error;
    await workload.create(
      LEASE_RESOURCE,
      {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: {
          ...key,
          ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: node.metadata.name, uid: node.metadata.uid ?? '' }],
        },
        spec: {
          holderIdentity: node.metadata.name,
          leaseDurationSeconds: NODE_LEASE_DURATION_SECONDS,
          renewTime: microTime(now),
        },
      },
      { signal },
    );
    return;
  }
  await workload.mergePatch(LEASE_RESOURCE, key, { spec: { renewTime: microTime(now) } }, { signal });
}

/**
 * The instance went away, so its Node goes too (what a cloud provider's node lifecycle controller does). Only a Node
 * carrying this instance's provider ID is deleted; a missing Node is fine.
 */
export async function deregisterNode(
  workload: Client,
  name: string,
  providerID: string,
  signal?: AbortSignal,
): Promise<void> {
  try {
    const node = await workload.get(NODE_RESOURCE, { name }, { signal });
    if (node.spec?.providerID !== providerID) return;
    await workload.delete(NODE_RESOURCE, { name }, { preconditions: { uid: node.metadata.uid }, signal });
  } catch (error) {
    if (!isNotFound(error)) throw error;
  }
}
