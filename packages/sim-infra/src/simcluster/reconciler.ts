import { CLUSTER_GROUP, CLUSTER_KIND, inspectIP } from '@tally-ipam/api-types';
import type { SharedInformer } from '@tally-ipam/controller-kit/cache';
import { isPaused, MANAGED_BY_ANNOTATION, setCondition, summarizeConditions } from '@tally-ipam/controller-kit/capi';
import {
  type Client,
  type EventRecorder,
  findOwnerReference,
  hasFinalizer,
  isNotFound,
} from '@tally-ipam/controller-kit/client';
import type { ReconcileContext, Reconciler, Request, Result } from '@tally-ipam/controller-kit/controller';
import {
  CONTROL_PLANE_ENDPOINT_READY_CONDITION,
  DEFAULT_CONTROL_PLANE_PORT,
  ENDPOINT_ALLOCATED_REASON,
  ENDPOINT_FROM_CLUSTER_REASON,
  ENDPOINT_FROM_SPEC_REASON,
  IP_ADDRESS_CLAIM_CONFLICT_REASON,
  IP_ADDRESS_CLAIM_FAILED_REASON,
  IP_ADDRESS_INVALID_REASON,
  SIM_CLUSTER_FINALIZER,
  WAITING_FOR_CONTROL_PLANE_ENDPOINT_REASON,
  WAITING_FOR_IP_ADDRESS_REASON,
} from '../api/v1alpha1/constants.js';
import type { PoolReference, SimCluster } from '../api/v1alpha1/types.js';
import { finishDeletion, pauseThenFinalizer } from '../lifecycle.js';
import { SIM_CLUSTER_RESOURCE, type StoredAddress, type StoredClaim, type StoredCluster } from '../resources.js';
import { controlPlaneEndpointClaimName } from '../util/claim-name.js';
import { type ConditionVerdict, conditionOf } from '../util/conditions.js';
import { claimAddress, releaseAddressClaims } from '../util/ip-address-claim.js';
import { statusMergePatch, statusUnchanged } from '../util/status.js';

const STATUS_FIELDS = ['initialization', 'failureDomains', 'conditions', 'observedGeneration'];

export interface SimClusterReconcilerDeps {
  readonly client: Client;
  readonly simClusters: SharedInformer<SimCluster>;
  readonly clusters: SharedInformer<StoredCluster>;
  readonly claims: SharedInformer<StoredClaim>;
  readonly addresses: SharedInformer<StoredAddress>;
  readonly recorder: EventRecorder;
  readonly now: () => Date;
}

/** True when the `cluster.x-k8s.io/managed-by` annotation says another system owns this infrastructure. */
export function isExternallyManaged(object: {
  metadata: { annotations?: Record<string, string> | undefined };
}): boolean {
  return object.metadata.annotations !== undefined && Object.hasOwn(object.metadata.annotations, MANAGED_BY_ANNOTATION);
}

/**
 * Reconciles SimClusters, following the v1beta2 InfraCluster contract: externally managed objects are left alone;
 * otherwise wait for the owner Cluster (CAPI sets the reference), honour pause, add the finalizer, settle
 * `spec.controlPlaneEndpoint` (given, allocated from an IPAM pool through an IPAddressClaim, or — as the contract asks
 * of a provider that supplies none — the Cluster's own), copy the failure domains and set
 * `status.initialization.provisioned`. Deletion deletes the endpoint claim and waits for it to go.
 */
export class SimClusterReconciler implements Reconciler {
  constructor(private readonly deps: SimClusterReconcilerDeps) {}

  async reconcile(request: Request, context: ReconcileContext): Promise<Result> {
    const simCluster = this.deps.simClusters.store.get(`${request.namespace}/${request.name}`);
    if (!simCluster) return {};
    if (isExternallyManaged(simCluster)) {
      context.logger.debug('externally managed: left alone');
      return {};
    }
    const namespace = simCluster.metadata.namespace ?? '';
    const owner = findOwnerReference(simCluster, { apiGroup: CLUSTER_GROUP, kind: CLUSTER_KIND });
    const cluster = owner ? this.deps.clusters.store.get(`${namespace}/${owner.name}`) : undefined;

    if (simCluster.metadata.deletionTimestamp) {
      if (cluster && isPaused(cluster, simCluster)) return {};
      return this.reconcileDelete(simCluster, context);
    }
    if (!owner || !cluster) {
      context.logger.debug({ owner: owner?.name }, 'waiting for the owner Cluster');
      return {};
    }

    const started = await pauseThenFinalizer(
      this.deps,
      { resource: SIM_CLUSTER_RESOURCE, object: simCluster, finalizer: SIM_CLUSTER_FINALIZER, cluster },
      context,
    );
    if (!started) return {};
    const { now, generation } = started;
    let { conditions, object: current } = started;
    const endpoint = await this.reconcileEndpoint(current, cluster, context);
    current = endpoint.simCluster;
    conditions = setCondition(
      conditions,
      conditionOf(CONTROL_PLANE_ENDPOINT_READY_CONDITION, endpoint.verdict, generation),
      now,
    );
    conditions = setCondition(
      conditions,
      summarizeConditions({
        conditions,
        forConditionTypes: [CONTROL_PLANE_ENDPOINT_READY_CONDITION],
        observedGeneration: generation,
      }),
      now,
    );
    const provisioned = endpoint.verdict.status === 'True' || current.status?.initialization?.provisioned === true;
    if (provisioned && current.status?.initialization?.provisioned !== true) {
      void this.deps.recorder.normal(current, 'Provisioned', 'Provision', 'Simulated cluster infrastructure is ready');
    }
    await this.writeStatus(
      current,
      {
        initialization: provisioned ? { provisioned: true } : undefined,
        failureDomains: current.spec.failureDomains,
        conditions,
        observedGeneration: generation,
      },
      context,
    );
    return {};
  }

  /** Settles the endpoint; returns the (possibly patched) SimCluster and the ControlPlaneEndpointReady verdict. */
  private async reconcileEndpoint(
    simCluster: SimCluster,
    cluster: StoredCluster,
    context: ReconcileContext,
  ): Promise<{ simCluster: SimCluster; verdict: ConditionVerdict }> {
    const spec = simCluster.spec.controlPlaneEndpoint;
    const poolRef = simCluster.spec.controlPlaneEndpointPoolRef;
    if (spec?.host) {
      let current = simCluster;
      if (!spec.port) {
        // CAPI treats an endpoint without a port as unset (`APIEndpoint.IsValid`): complete it with the API port.
        current = await this.patchEndpoint(simCluster, spec.host, DEFAULT_CONTROL_PLANE_PORT, context);
      }
      return {
        simCluster: current,
        verdict: {
          status: 'True',
          reason: poolRef ? ENDPOINT_ALLOCATED_REASON : ENDPOINT_FROM_SPEC_REASON,
          message: `control plane at ${spec.host}:${current.spec.controlPlaneEndpoint?.port ?? DEFAULT_CONTROL_PLANE_PORT}`,
        },
      };
    }
    if (poolRef) return this.allocateEndpoint(simCluster, cluster, poolRef, context);
    const fromCluster = cluster.spec?.controlPlaneEndpoint;
    if (fromCluster?.host && fromCluster.port) {
      return {
        simCluster,
        verdict: {
          status: 'True',
          reason: ENDPOINT_FROM_CLUSTER_REASON,
          message: `control plane at ${fromCluster.host}:${fromCluster.port} (from Cluster ${cluster.metadata.name})`,
        },
      };
    }
    return {
      simCluster,
      verdict: {
        status: 'False',
        reason: WAITING_FOR_CONTROL_PLANE_ENDPOINT_REASON,
        message:
          'no endpoint yet: set spec.controlPlaneEndpoint or spec.controlPlaneEndpointPoolRef, or Cluster.spec.controlPlaneEndpoint',
      },
    };
  }

  /**
   * The endpoint host from IPAM: the claim step (see `claimAddress`) until its IPAddress is there, then the address
   * into `spec.controlPlaneEndpoint`, once: afterwards the host is set and `reconcileEndpoint` never comes here again.
   */
  private async allocateEndpoint(
    simCluster: SimCluster,
    cluster: StoredCluster,
    poolRef: PoolReference,
    context: ReconcileContext,
  ): Promise<{ simCluster: SimCluster; verdict: ConditionVerdict }> {
    const claimName = controlPlaneEndpointClaimName(simCluster.metadata.name);
    const request = { name: claimName, clusterName: cluster.metadata.name, poolRef };
    const step = await claimAddress(this.deps, simCluster, request, context.signal);
    const verdict = (reason: string, message: string): { simCluster: SimCluster; verdict: ConditionVerdict } => ({
      simCluster,
      verdict: { status: 'False', reason, message },
    });
    const from = `${poolRef.kind} ${poolRef.name}`;
    switch (step.state) {
      case 'Created':
        context.logger.info({ claim: claimName, pool: poolRef }, 'control-plane endpoint IPAddressClaim requested');
        return verdict(
          WAITING_FOR_IP_ADDRESS_REASON,
          `IPAddressClaim ${claimName} created, waiting for an address from ${from}`,
        );
      case 'Deleting':
        return verdict(
          WAITING_FOR_IP_ADDRESS_REASON,
          `IPAddressClaim ${claimName} is being deleted; a new one follows`,
        );
      case 'Conflict':
        return verdict(IP_ADDRESS_CLAIM_CONFLICT_REASON, step.message);
      case 'Pending':
        if (step.ready?.status === 'False') {
          const detail = `${step.ready.reason}${step.ready.message ? `: ${step.ready.message}` : ''}`;
          return verdict(IP_ADDRESS_CLAIM_FAILED_REASON, `IPAddressClaim ${claimName}: ${detail}`);
        }
        return verdict(
          WAITING_FOR_IP_ADDRESS_REASON,
          `IPAddressClaim ${claimName} waiting for an address from ${from}`,
        );
      case 'AddressMissing':
        return verdict(
          WAITING_FOR_IP_ADDRESS_REASON,
          `IPAddress ${step.addressName} of IPAddressClaim ${claimName} not seen yet`,
        );
      case 'Bound':
        break;
    }
    if (step.mismatch) return verdict(IP_ADDRESS_INVALID_REASON, step.mismatch);
    const host = step.address.address;
    const ip = inspectIP(host);
    if (!ip.ok) {
      return verdict(
        IP_ADDRESS_INVALID_REASON,
        `IPAddressClaim ${claimName}: address ${JSON.stringify(host)} of IPAddress ${step.addressName} is not a valid IP address (${ip.reason})`,
      );
    }
    const port = simCluster.spec.controlPlaneEndpoint?.port ?? DEFAULT_CONTROL_PLANE_PORT;
    const patched = await this.patchEndpoint(simCluster, host, port, context);
    void this.deps.recorder.normal(
      patched,
      'ControlPlaneEndpointAllocated',
      'AllocateEndpoint',
      `Control-plane endpoint ${host}:${port} allocated from ${from}`,
    );
    return {
      simCluster: patched,
      verdict: { status: 'True', reason: ENDPOINT_ALLOCATED_REASON, message: `control plane at ${host}:${port}` },
    };
  }

  private patchEndpoint(
    simCluster: SimCluster,
    host: string,
    port: number,
    context: ReconcileContext,
  ): Promise<SimCluster> {
    return this.deps.client.mergePatch(
      SIM_CLUSTER_RESOURCE,
      { namespace: simCluster.metadata.namespace, name: simCluster.metadata.name },
      {
        metadata: { resourceVersion: simCluster.metadata.resourceVersion },
        spec: { controlPlaneEndpoint: { host, port } },
      },
      { signal: context.signal },
    );
  }

  /** Releases the endpoint claim (see `releaseAddressClaims`); the finalizer goes once it is gone. */
  private async reconcileDelete(simCluster: SimCluster, context: ReconcileContext): Promise<Result> {
    if (!hasFinalizer(simCluster, SIM_CLUSTER_FINALIZER)) return {};
    const names = simCluster.spec.controlPlaneEndpointPoolRef
      ? [controlPlaneEndpointClaimName(simCluster.metadata.name)]
      : [];
    const remaining = await releaseAddressClaims(this.deps, simCluster, names, context.signal);
    return finishDeletion(
      this.deps,
      { resource: SIM_CLUSTER_RESOURCE, object: simCluster, finalizer: SIM_CLUSTER_FINALIZER },
      context,
      {
        waitingFor:
          remaining.length > 0 ? `waiting for IPAddressClaims to be deleted: ${remaining.join(', ')}` : undefined,
        writeConditions: (conditions) =>
          this.writeStatus(simCluster, { ...(simCluster.status ?? {}), conditions }, context),
      },
    );
  }

  private async writeStatus(
    simCluster: SimCluster,
    status: Readonly<Record<string, unknown>>,
    context: ReconcileContext,
  ): Promise<void> {
    if (statusUnchanged(simCluster.status, status)) return;
    try {
      await this.deps.client.patchStatus(SIM_CLUSTER_RESOURCE, simCluster, statusMergePatch(status, STATUS_FIELDS), {
        signal: context.signal,
      });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }
}
