import {
  CLUSTER_GROUP,
  CLUSTER_NAME_LABEL,
  IPAM_V1BETA2_API_VERSION,
  MACHINE_KIND,
  MACHINEPOOL_KIND,
} from '@tally-ipam/api-types';
import { OWNER_UID_INDEX, type SharedInformer } from '@tally-ipam/controller-kit/cache';
import {
  type Condition,
  ensurePausedCondition,
  getCondition,
  isPaused,
  setCondition,
} from '@tally-ipam/controller-kit/capi';
import {
  addFinalizer,
  type Client,
  type EventRecorder,
  findOwnerReference,
  hasFinalizer,
  isAlreadyExists,
  isControlledBy,
  isNotFound,
  ownerReferenceTo,
  removeFinalizer,
} from '@tally-ipam/controller-kit/client';
import type { ReconcileContext, Reconciler, Request, Result } from '@tally-ipam/controller-kit/controller';
import { bootstrapDataSecretName, isMachinePoolOwned, type StoredMachinePool } from '@tally-ipam/machinepool';
import {
  DELETING_REASON,
  INSTANCE_PROVISIONED_CONDITION,
  IP_ADDRESSES_READY_CONDITION,
  NODE_PROVISIONED_CONDITION,
  NODE_READY_REASON,
  NODE_REGISTRATION_FAILED_REASON,
  PROVISIONED_REASON,
  READY_CONDITION,
  SIM_GROUP,
  SIM_MACHINE_FINALIZER,
  SIM_MACHINE_POOL_KIND,
  WAITING_FOR_BOOTSTRAP_DATA_REASON,
  WAITING_FOR_CLUSTER_INFRASTRUCTURE_REASON,
  WAITING_FOR_INSTANCE_REASON,
  WAITING_FOR_IP_ADDRESSES_REASON,
  WAITING_FOR_KUBECONFIG_REASON,
} from './api/v1alpha1/constants.js';
import type { DeviceStatus, MachineAddress, PoolReference, SimMachine, SimMachinePool } from './api/v1alpha1/types.js';
import {
  CLAIM_RESOURCE,
  SECRET_RESOURCE,
  SIM_MACHINE_RESOURCE,
  type StoredAddress,
  type StoredClaim,
  type StoredCluster,
  type StoredMachine,
} from './resources.js';
import {
  deregisterNode,
  kubeconfigSecretName,
  NODE_LEASE_RENEW_INTERVAL_MS,
  registerNode,
  type WorkloadClusters,
} from './simulated-cloud.js';
import { deviceToken, ipAddressClaimName } from './util/claim-name.js';
import {
  type ClaimProgress,
  type ConditionVerdict,
  conditionOf,
  ipAddressesCondition,
  summarizeReady,
} from './util/conditions.js';
import { type ClaimedAddress, validateClaimedAddresses } from './util/ip-addresses.js';
import { simProviderID } from './util/provider-id.js';
import { statusMergePatch, statusUnchanged } from './util/status.js';

/** Label CAPI puts on control-plane Machines (`clusterv1.MachineControlPlaneLabel`). */
const CONTROL_PLANE_LABEL = 'cluster.x-k8s.io/control-plane';
/** Secrets and the workload cluster are not watched: look again after this long while waiting on them. */
const POLL_UNWATCHED_MS = 5_000;
/** A safety net while claims are being deleted; their delete events normally re-queue the machine first. */
const DELETION_POLL_MS = 5_000;
const STATUS_FIELDS = ['initialization', 'addresses', 'devices', 'failureDomain', 'conditions', 'observedGeneration'];

/** One IPAddressClaim a SimMachine needs: one per (device, pool). */
export interface DesiredClaim {
  readonly name: string;
  readonly device: string;
  readonly deviceIndex: number;
  readonly poolIndex: number;
  readonly poolRef: PoolReference;
}

/** The claims a SimMachine's spec asks for, named deterministically (see `ipAddressClaimName`). */
export function desiredClaims(simMachine: SimMachine): DesiredClaim[] {
  const claims: DesiredClaim[] = [];
  const devices = simMachine.spec.network?.devices ?? [];
  devices.forEach((device, deviceIndex) => {
    (device.addressesFromPools ?? []).forEach((poolRef, poolIndex) => {
      claims.push({
        name: ipAddressClaimName(simMachine.metadata.name, device, deviceIndex, poolIndex),
        device: deviceToken(device, deviceIndex),
        deviceIndex,
        poolIndex,
        poolRef,
      });
    });
  });
  return claims;
}

export interface SimMachineReconcilerDeps {
  readonly client: Client;
  readonly simMachines: SharedInformer<SimMachine>;
  readonly machines: SharedInformer<StoredMachine>;
  readonly machinePools: SharedInformer<StoredMachinePool>;
  readonly simMachinePools: SharedInformer<SimMachinePool>;
  readonly clusters: SharedInformer<StoredCluster>;
  readonly claims: SharedInformer<StoredClaim>;
  readonly addresses: SharedInformer<StoredAddress>;
  readonly workloads: WorkloadClusters;
  readonly recorder: EventRecorder;
  readonly now: () => Date;
}

/** What an instance is provisioned for: from its Machine, or from its MachinePool for a pool's instance. */
export interface InstanceOwner {
  readonly clusterName: string;
  /** Where the bootstrap data Secret name comes from, for messages. */
  readonly bootstrapSource: string;
  readonly dataSecretName: string | undefined;
  readonly version: string | undefined;
  readonly failureDomain: string | undefined;
  readonly controlPlane: boolean;
}

interface ClaimsOutcome {
  readonly verdict: ConditionVerdict;
  readonly addresses: ClaimedAddress[];
  readonly devices: DeviceStatus[];
  readonly created: string[];
}

/**
 * Reconciles SimMachines, following the v1beta2 InfraMachine contract and the IPAM contract's consumer side:
 * owner Machine → Cluster → pause → finalizer → one IPAddressClaim per (device, pool) → validated IPAddresses →
 * (cluster infrastructure provisioned, bootstrap data present) → `spec.providerID`, `status.addresses`,
 * `status.initialization.provisioned` → a Ready Node in the workload cluster. Deletion removes the Node, deletes the
 * claims explicitly (garbage collection may not run) and waits until they are gone before dropping the finalizer.
 */
export class SimMachineReconciler implements Reconciler {
  constructor(private readonly deps: SimMachineReconcilerDeps) {}

  async reconcile(request: Request, context: ReconcileContext): Promise<Result> {
    const simMachine = this.deps.simMachines.store.get(`${request.namespace}/${request.name}`);
    if (!simMachine) return {};
    const namespace = simMachine.metadata.namespace ?? '';
    const owner = this.instanceOwner(simMachine);
    const clusterName = owner?.clusterName ?? simMachine.metadata.labels?.[CLUSTER_NAME_LABEL];
    const cluster = clusterName ? this.deps.clusters.store.get(`${namespace}/${clusterName}`) : undefined;

    if (simMachine.metadata.deletionTimestamp) {
      if (cluster && isPaused(cluster, simMachine)) return {};
      return this.reconcileDelete(simMachine, cluster, context);
    }
    if (!owner) {
      // The Machine controller (or, for a pool's instance, the MachinePool controller) sets the owner reference.
      context.logger.debug('waiting for the owner Machine or MachinePool');
      return {};
    }
    if (!cluster) {
      context.logger.debug({ cluster: clusterName }, 'waiting for the Cluster');
      return {};
    }

    const now = this.deps.now();
    const generation = simMachine.metadata.generation ?? 0;
    const pause = await ensurePausedCondition({
      client: this.deps.client,
      resource: SIM_MACHINE_RESOURCE,
      cluster,
      object: simMachine,
      conditions: simMachine.status?.conditions,
      write: 'when paused',
      now,
      signal: context.signal,
    });
    if (pause.paused) return {};
    let conditions: Condition[] = pause.conditions;

    let current = await addFinalizer(this.deps.client, SIM_MACHINE_RESOURCE, simMachine, SIM_MACHINE_FINALIZER, {
      signal: context.signal,
    });

    const claims = await this.reconcileClaims(current, owner, context);
    conditions = setCondition(conditions, conditionOf(IP_ADDRESSES_READY_CONDITION, claims.verdict, generation), now);
    let requeueAfterMs: number | undefined;

    // The instance: exists once it has a provider ID; created only when everything it is made from is there.
    let instance: ConditionVerdict;
    if (current.spec.providerID) {
      instance = { status: 'True', reason: PROVISIONED_REASON, message: `instance ${current.spec.providerID} exists` };
    } else {
      const blocker = await this.provisioningBlocker(current, owner, cluster, claims.verdict, context);
      if (blocker) {
        instance = blocker.verdict;
        requeueAfterMs = blocker.requeueAfterMs;
      } else {
        const providerID = simProviderID(namespace, current.metadata.name);
        current = await this.deps.client.mergePatch(
          SIM_MACHINE_RESOURCE,
          { namespace, name: current.metadata.name },
          { spec: { providerID } },
          { signal: context.signal },
        );
        void this.deps.recorder.normal(
          current,
          'InstanceProvisioned',
          'Provision',
          `Simulated instance ${providerID} created`,
        );
        instance = { status: 'True', reason: PROVISIONED_REASON, message: `instance ${providerID} exists` };
      }
    }
    conditions = setCondition(conditions, conditionOf(INSTANCE_PROVISIONED_CONDITION, instance, generation), now);

    let node: ConditionVerdict = {
      status: 'False',
      reason: WAITING_FOR_INSTANCE_REASON,
      message: 'the Node registers once the instance exists',
    };
    if (current.spec.providerID) {
      const registered = await this.registerNode(current, owner, cluster, claims.addresses, context);
      node = registered.verdict;
      requeueAfterMs = registered.requeueAfterMs ?? requeueAfterMs;
    }
    conditions = setCondition(conditions, conditionOf(NODE_PROVISIONED_CONDITION, node, generation), now);
    conditions = setCondition(
      conditions,
      summarizeReady(
        [
          { type: IP_ADDRESSES_READY_CONDITION, ...claims.verdict },
          { type: INSTANCE_PROVISIONED_CONDITION, ...instance },
          { type: NODE_PROVISIONED_CONDITION, ...node },
        ],
        generation,
      ),
      now,
    );

    const addressesValid = claims.verdict.status === 'True';
    const statusAddresses: MachineAddress[] | undefined = addressesValid
      ? [
          { type: 'Hostname', address: current.metadata.name },
          ...claims.addresses.map((claimed) => ({ type: 'InternalIP' as const, address: claimed.address })),
        ]
      : current.status?.addresses;
    await this.writeStatus(
      current,
      {
        // Provisioned never flips back (CAPI latches it too); derived from the spec, so it survives `clusterctl move`.
        initialization: current.spec.providerID ? { provisioned: true } : undefined,
        addresses: statusAddresses,
        devices: addressesValid && claims.devices.length > 0 ? claims.devices : current.status?.devices,
        failureDomain: owner.failureDomain,
        conditions,
        observedGeneration: generation,
      },
      context,
    );
    return requeueAfterMs === undefined ? {} : { requeueAfterMs };
  }

  /**
   * What the instance is made for. A plain SimMachine belongs to its owner Machine. A MachinePool Machine
   * (`labels.IsMachinePoolOwned`) takes cluster, bootstrap data and version from the MachinePool, as CAPD's
   * DockerMachine does — CAPI gives its Machine an empty `dataSecretName`; before CAPI created that Machine, the
   * instance is reached through its SimMachinePool, so a pool can provision (and list provider IDs) on its own.
   */
  private instanceOwner(simMachine: SimMachine): InstanceOwner | undefined {
    const namespace = simMachine.metadata.namespace ?? '';
    const machineRef = findOwnerReference(simMachine, { apiGroup: CLUSTER_GROUP, kind: MACHINE_KIND });
    const machine = machineRef ? this.deps.machines.store.get(`${namespace}/${machineRef.name}`) : undefined;
    const machinePool = isMachinePoolOwned(simMachine) ? this.machinePoolOf(simMachine) : undefined;
    if (machinePool) {
      return {
        clusterName: machinePool.spec.clusterName,
        bootstrapSource: `MachinePool ${machinePool.metadata.name} (spec.template.spec.bootstrap.dataSecretName)`,
        dataSecretName: bootstrapDataSecretName(machinePool),
        version: machinePool.spec.template.spec.version,
        failureDomain: machine?.spec.failureDomain || undefined,
        controlPlane: false,
      };
    }
    if (!machine) return undefined;
    return {
      clusterName: machine.spec.clusterName,
      bootstrapSource: `Machine ${machine.metadata.name} (spec.bootstrap.dataSecretName)`,
      dataSecretName: machine.spec.bootstrap?.dataSecretName || undefined,
      version: machine.spec.version,
      failureDomain: machine.spec.failureDomain || undefined,
      controlPlane: machine.metadata.labels?.[CONTROL_PLANE_LABEL] !== undefined,
    };
  }

  /** SimMachine → its SimMachinePool (non-controller owner) → the pool's MachinePool (CAPI's controller owner). */
  private machinePoolOf(simMachine: SimMachine): StoredMachinePool | undefined {
    const namespace = simMachine.metadata.namespace ?? '';
    const poolRef = findOwnerReference(simMachine, { apiGroup: SIM_GROUP, kind: SIM_MACHINE_POOL_KIND });
    const pool = poolRef ? this.deps.simMachinePools.store.get(`${namespace}/${poolRef.name}`) : undefined;
    const machinePoolRef = pool
      ? findOwnerReference(pool, { apiGroup: CLUSTER_GROUP, kind: MACHINEPOOL_KIND })
      : undefined;
    return machinePoolRef ? this.deps.machinePools.store.get(`${namespace}/${machinePoolRef.name}`) : undefined;
  }

  /**
   * Creates the missing claims and reads where every claim stands. A claim of the right name that another object
   * controls is reported, never adopted: it could hold someone else's address.
   */
  private async reconcileClaims(
    simMachine: SimMachine,
    owner: InstanceOwner,
    context: ReconcileContext,
  ): Promise<ClaimsOutcome> {
    const namespace = simMachine.metadata.namespace ?? '';
    const desired = desiredClaims(simMachine);
    const progress: ClaimProgress[] = [];
    const bound: ClaimedAddress[] = [];
    const mismatches: string[] = [];
    const created: string[] = [];
    for (const want of desired) {
      const claim = this.deps.claims.store.get(`${namespace}/${want.name}`);
      if (!claim) {
        await this.createClaim(simMachine, owner.clusterName, want, context);
        created.push(want.name);
        progress.push({ name: want.name, state: 'Missing' });
        continue;
      }
      if (!isControlledBy(claim, simMachine)) {
        const controller = claim.metadata.ownerReferences?.find((ref) => ref.controller);
        progress.push({
          name: want.name,
          state: 'Conflict',
          message: `IPAddressClaim ${want.name} exists but is controlled by ${controller ? `${controller.kind} ${controller.name}` : 'no SimMachine'}, not by this SimMachine; delete or rename it`,
        });
        continue;
      }
      if (claim.metadata.deletionTimestamp) {
        progress.push({ name: want.name, state: 'Missing' });
        continue;
      }
      const addressName = claim.status?.addressRef?.name;
      if (!addressName) {
        const ready = getCondition(claim.status?.conditions, 'Ready');
        progress.push({
          name: want.name,
          state: 'Pending',
          ready: ready ? { status: ready.status, reason: ready.reason, message: ready.message } : undefined,
        });
        continue;
      }
      const address = this.deps.addresses.store.get(`${namespace}/${addressName}`);
      if (!address) {
        progress.push({ name: want.name, state: 'AddressMissing', addressName });
        continue;
      }
      if (address.spec.claimRef.name !== want.name) {
        mismatches.push(
          `IPAddressClaim ${want.name}: its IPAddress ${addressName} belongs to claim ${address.spec.claimRef.name}`,
        );
      }
      progress.push({ name: want.name, state: 'Bound' });
      bound.push({
        claimName: want.name,
        device: want.device,
        deviceIndex: want.deviceIndex,
        address: address.spec.address,
        prefix: address.spec.prefix,
        gateway: address.spec.gateway,
      });
    }
    await this.deleteUndesiredClaims(simMachine, new Set(desired.map((want) => want.name)), context);
    const validation = validateClaimedAddresses(bound);
    const problems = [...mismatches, ...(validation.valid ? [] : validation.problems)];
    const verdict = ipAddressesCondition(progress, problems);
    if (problems.length > 0) {
      void this.deps.recorder.warning(simMachine, 'IPAddressInvalid', 'ValidateIPAddresses', problems.join('; '));
    }
    return {
      verdict,
      addresses: bound,
      devices: validation.valid
        ? validation.devices.map((device) => ({
            name: device.name,
            ipAddrs: device.ipAddrs,
            gateway4: device.gateway4,
            gateway6: device.gateway6,
          }))
        : [],
      created,
    };
  }

  /**
   * The IPAM contract's consumer side: `spec.poolRef`, `spec.clusterName` and the cluster-name label (IPAM providers
   * read either; clusterctl move needs the owner chain), and a controller owner reference to the SimMachine with
   * blockOwnerDeletion, so garbage collection — where it runs — also removes the claim and the chain is moved along.
   */
  private async createClaim(
    simMachine: SimMachine,
    clusterName: string,
    want: DesiredClaim,
    context: ReconcileContext,
  ): Promise<void> {
    try {
      await this.deps.client.create(
        CLAIM_RESOURCE,
        {
          apiVersion: IPAM_V1BETA2_API_VERSION,
          kind: 'IPAddressClaim',
          metadata: {
            name: want.name,
            namespace: simMachine.metadata.namespace,
            labels: { [CLUSTER_NAME_LABEL]: clusterName },
            ownerReferences: [ownerReferenceTo(simMachine, { controller: true, blockOwnerDeletion: true })],
          },
          spec: {
            clusterName,
            poolRef: { apiGroup: want.poolRef.apiGroup, kind: want.poolRef.kind, name: want.poolRef.name },
          },
        },
        { signal: context.signal },
      );
      context.logger.info({ claim: want.name, pool: want.poolRef }, 'IPAddressClaim created');
    } catch (error) {
      // Created by an earlier reconcile the cache has not shown yet: the next event brings it.
      if (!isAlreadyExists(error)) throw error;
    }
  }

  /** Claims this SimMachine controls that its spec no longer asks for (e.g. left over by an older naming). */
  private async deleteUndesiredClaims(
    simMachine: SimMachine,
    wanted: ReadonlySet<string>,
    context: ReconcileContext,
  ): Promise<void> {
    for (const claim of this.ownedClaims(simMachine)) {
      if (wanted.has(claim.metadata.name) || claim.metadata.deletionTimestamp) continue;
      await this.deleteClaim(claim, context);
    }
  }

  private ownedClaims(simMachine: SimMachine): StoredClaim[] {
    const uid = simMachine.metadata.uid;
    if (!uid) return [];
    return this.deps.claims.store
      .byIndex(OWNER_UID_INDEX, uid)
      .filter(
        (claim) => claim.metadata.namespace === simMachine.metadata.namespace && isControlledBy(claim, simMachine),
      );
  }

  private async liveClaim(
    namespace: string,
    name: string,
    context: ReconcileContext,
  ): Promise<StoredClaim | undefined> {
    try {
      return await this.deps.client.get(CLAIM_RESOURCE, { namespace, name }, { signal: context.signal });
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  private async deleteClaim(claim: StoredClaim, context: ReconcileContext): Promise<void> {
    try {
      await this.deps.client.delete(
        CLAIM_RESOURCE,
        { namespace: claim.metadata.namespace, name: claim.metadata.name },
        { preconditions: { uid: claim.metadata.uid }, signal: context.signal },
      );
      context.logger.info({ claim: claim.metadata.name }, 'IPAddressClaim deleted');
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }

  /** Why the instance cannot be created yet, in the contract's order; undefined when it can. */
  private async provisioningBlocker(
    simMachine: SimMachine,
    owner: InstanceOwner,
    cluster: StoredCluster,
    addresses: ConditionVerdict,
    context: ReconcileContext,
  ): Promise<{ verdict: ConditionVerdict; requeueAfterMs?: number | undefined } | undefined> {
    const namespace = simMachine.metadata.namespace ?? '';
    if (cluster.status?.initialization?.infrastructureProvisioned !== true) {
      return {
        verdict: {
          status: 'False',
          reason: WAITING_FOR_CLUSTER_INFRASTRUCTURE_REASON,
          message: `Cluster ${cluster.metadata.name} does not have status.initialization.infrastructureProvisioned yet`,
        },
      };
    }
    const dataSecretName = owner.dataSecretName;
    if (!dataSecretName) {
      return {
        verdict: {
          status: 'False',
          reason: WAITING_FOR_BOOTSTRAP_DATA_REASON,
          message: `no bootstrap data yet: ${owner.bootstrapSource} is empty`,
        },
      };
    }
    try {
      await this.deps.client.get(SECRET_RESOURCE, { namespace, name: dataSecretName }, { signal: context.signal });
    } catch (error) {
      if (!isNotFound(error)) throw error;
      return {
        verdict: {
          status: 'False',
          reason: WAITING_FOR_BOOTSTRAP_DATA_REASON,
          message: `bootstrap data Secret ${dataSecretName} named by ${owner.bootstrapSource} does not exist yet`,
        },
        requeueAfterMs: POLL_UNWATCHED_MS,
      };
    }
    if (addresses.status !== 'True') {
      return {
        verdict: {
          status: 'False',
          reason: WAITING_FOR_IP_ADDRESSES_REASON,
          message: `waiting for IP addresses: ${addresses.message}`,
        },
      };
    }
    return undefined;
  }

  /** The simulated kubelet: a Ready Node with the instance's provider ID in the workload cluster. */
  private async registerNode(
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

  private async reconcileDelete(
    simMachine: SimMachine,
    cluster: StoredCluster | undefined,
    context: ReconcileContext,
  ): Promise<Result> {
    if (!hasFinalizer(simMachine, SIM_MACHINE_FINALIZER)) return {};
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
    // Explicit deletes: the owner reference alone only works where kube-controller-manager's garbage collector runs.
    const remaining = this.ownedClaims(simMachine);
    for (const want of desiredClaims(simMachine)) {
      const claim = this.deps.claims.store.get(`${namespace}/${want.name}`);
      if (claim && isControlledBy(claim, simMachine) && !remaining.includes(claim)) remaining.push(claim);
    }
    if (remaining.length === 0) {
      // The cache may not show a claim created moments ago yet: ask the API server before letting go.
      for (const want of desiredClaims(simMachine)) {
        const claim = await this.liveClaim(namespace, want.name, context);
        if (claim && isControlledBy(claim, simMachine)) remaining.push(claim);
      }
    }
    for (const claim of remaining) {
      if (!claim.metadata.deletionTimestamp) await this.deleteClaim(claim, context);
    }
    if (remaining.length > 0) {
      const names = remaining.map((claim) => claim.metadata.name).join(', ');
      const generation = simMachine.metadata.generation ?? 0;
      const conditions = setCondition(
        simMachine.status?.conditions,
        {
          type: READY_CONDITION,
          status: 'False',
          reason: DELETING_REASON,
          message: `waiting for ${remaining.length} IPAddressClaims to be deleted: ${names}`,
          observedGeneration: generation,
        },
        this.deps.now(),
      );
      await this.writeStatus(simMachine, { ...(simMachine.status ?? {}), conditions }, context);
      return { requeueAfterMs: DELETION_POLL_MS };
    }
    await removeFinalizer(this.deps.client, SIM_MACHINE_RESOURCE, simMachine, SIM_MACHINE_FINALIZER, {
      signal: context.signal,
    });
    context.logger.info('claims gone, finalizer removed');
    return {};
  }

  private async writeStatus(
    simMachine: SimMachine,
    status: Readonly<Record<string, unknown>>,
    context: ReconcileContext,
  ): Promise<void> {
    if (statusUnchanged(simMachine.status, status)) return;
    try {
      await this.deps.client.patchStatus(SIM_MACHINE_RESOURCE, simMachine, statusMergePatch(status, STATUS_FIELDS), {
        signal: context.signal,
      });
    } catch (error) {
      // Deleted while we worked (its finalizer already gone): nothing left to report on.
      if (!isNotFound(error)) throw error;
    }
  }
}
