import type { ReconcileContext } from '@tally-ipam/controller-kit/controller';
import {
  NODE_READY_REASON,
  NODE_REGISTRATION_FAILED_REASON,
  WAITING_FOR_KUBECONFIG_REASON,
} from '../api/v1alpha1/constants.js';
import type { SimMachine } from '../api/v1alpha1/types.js';
import type { StoredCluster } from '../resources.js';
import {
  deregisterNode,
  kubeconfigSecretName,
  NODE_LEASE_RENEW_INTERVAL_MS,
  registerNode,
} from '../simulated-cloud.js';
import type { ConditionVerdict } from '../util/conditions.js';
import { simInstanceAutoscaleStatus } from '../util/instance-size.js';
import type { ClaimedAddress } from '../util/ip-addresses.js';

import { type InstanceOwner, POLL_UNWATCHED_MS, type SimMachineReconcilerDeps } from './deps.js';

/** The simulated kubelet of a SimMachine: its Node in the workload cluster, registered and removed. */
export class SimMachineNode {
  constructor(private readonly deps: SimMachineReconcilerDeps) {}

  /** The simulated kubelet: a Ready Node with the instance's provider ID in the workload cluster. */
  async register(
    simMachine: SimMachine,
    owner: InstanceOwner,
    cluster: StoredCluster,
    addresses: readonly ClaimedAddress[],
    context: ReconcileContext,
  ): Promise<{ verdict: ConditionVerdict; requeueAfterMs?: number | undefined }> {
    const namespace = simMachine.metadata.namespace ?? '';
    const providerID = simMachine.spec.providerID ?? '';
    try {
      const workload = await this.deps.workloads.clientFor(namespace, cluster.metadata.name, context.signal);
      if (!workload) {
        return {
          verdict: {
            status: 'False',
            reason: WAITING_FOR_KUBECONFIG_REASON,
            message: `Secret ${kubeconfigSecretName(cluster.metadata.name)} does not exist yet; the Node registers once the workload cluster is reachable`,
          },
          requeueAfterMs: POLL_UNWATCHED_MS,
        };
      }
      const node = await registerNode(
        workload,
        {
          name: simMachine.metadata.name,
          providerID,
          kubeletVersion: owner.version,
          internalIPs: addresses.map((claimed) => claimed.address),
          controlPlane: owner.controlPlane,
          capacity: simInstanceAutoscaleStatus(simMachine.spec.size).capacity,
        },
        this.deps.now(),
        context.signal,
      );
      // Back in time to renew the Node's heartbeat Lease, as a kubelet does.
      return {
        verdict: { status: 'True', reason: NODE_READY_REASON, message: `Node ${node.metadata.name} is Ready` },
        requeueAfterMs: NODE_LEASE_RENEW_INTERVAL_MS,
      };
    } catch (error) {
      context.logger.warn({ err: error }, 'could not register the Node');
      return {
        verdict: {
          status: 'False',
          reason: NODE_REGISTRATION_FAILED_REASON,
          message: error instanceof Error ? error.message : String(error),
        },
        requeueAfterMs: POLL_UNWATCHED_MS,
      };
    }
  }

  /** Removes the instance's Node, best effort: the workload cluster may be gone or unreachable. */
  async deregister(
    simMachine: SimMachine,
    cluster: StoredCluster | undefined,
    context: ReconcileContext,
  ): Promise<void> {
    const namespace = simMachine.metadata.namespace ?? '';
    const providerID = simMachine.spec.providerID;
    if (providerID && cluster) {
      try {
        const workload = await this.deps.workloads.clientFor(namespace, cluster.metadata.name, context.signal);
        if (workload) await deregisterNode(workload, simMachine.metadata.name, providerID, context.signal);
      } catch (error) {
        // Best effort: an unreachable workload cluster must not keep the machine (and CAPI's Machine deletion)
        // forever; CAPI's Machine controller deletes the Node itself as well.
        context.logger.warn({ err: error }, 'could not remove the Node of the deleted instance');
      }
    }
  }
}
