import { CLUSTER_NAME_LABEL } from '@tally-ipam/api-types';
import { isPaused, setCondition, summarizeConditions } from '@tally-ipam/controller-kit/capi';
import { hasFinalizer, isNotFound } from '@tally-ipam/controller-kit/client';
import type { ReconcileContext, Reconciler, Request, Result } from '@tally-ipam/controller-kit/controller';
import {
  INSTANCE_PROVISIONED_CONDITION,
  IP_ADDRESSES_READY_CONDITION,
  NODE_PROVISIONED_CONDITION,
  PROVISIONED_REASON,
  SIM_MACHINE_FINALIZER,
  WAITING_FOR_INSTANCE_REASON,
} from '../api/v1alpha1/constants.js';
import type { MachineAddress, SimMachine } from '../api/v1alpha1/types.js';
import { finishDeletion, pauseThenFinalizer } from '../lifecycle.js';
import { SIM_MACHINE_RESOURCE, type StoredCluster } from '../resources.js';
import { type ConditionVerdict, conditionOf } from '../util/conditions.js';
import { simProviderID } from '../util/provider-id.js';
import { statusMergePatch, statusUnchanged } from '../util/status.js';

import { SimMachineClaims } from './claims.js';
import type { SimMachineReconcilerDeps } from './deps.js';
import { SimMachineInstance } from './instance.js';
import { SimMachineNode } from './node.js';

const STATUS_FIELDS = ['initialization', 'addresses', 'devices', 'failureDomain', 'conditions', 'observedGeneration'];

/**
 * Reconciles SimMachines, following the v1beta2 InfraMachine contract and the IPAM contract's consumer side:
 * owner Machine → Cluster → pause → finalizer → one IPAddressClaim per (device, pool) → validated IPAddresses →
 * (cluster infrastructure provisioned, bootstrap data present) → `spec.providerID`, `status.addresses`,
 * `status.initialization.provisioned` → a Ready Node in the workload cluster. Deletion removes the Node, deletes the
 * claims explicitly (garbage collection may not run) and waits until they are gone before dropping the finalizer.
 */
export class SimMachineReconciler implements Reconciler {
  private readonly claimsStep: SimMachineClaims;
  private readonly instance: SimMachineInstance;
  private readonly node: SimMachineNode;

  constructor(private readonly deps: SimMachineReconcilerDeps) {
    this.claimsStep = new SimMachineClaims(deps);
    this.instance = new SimMachineInstance(deps);
    this.node = new SimMachineNode(deps);
  }

  async reconcile(request: Request, context: ReconcileContext): Promise<Result> {
    const simMachine = this.deps.simMachines.store.get(`${request.namespace}/${request.name}`);
    if (!simMachine) return {};
    const namespace = simMachine.metadata.namespace ?? '';
    const owner = this.instance.ownerOf(simMachine);
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

    const started = await pauseThenFinalizer(
      this.deps,
      { resource: SIM_MACHINE_RESOURCE, object: simMachine, finalizer: SIM_MACHINE_FINALIZER, cluster },
      context,
    );
    if (!started) return {};
    const { now, generation } = started;
    let { conditions, object: current } = started;

    const claims = await this.claimsStep.reconcile(current, owner, context);
    conditions = setCondition(conditions, conditionOf(IP_ADDRESSES_READY_CONDITION, claims.verdict, generation), now);
    let requeueAfterMs: number | undefined;

    // The instance: exists once it has a provider ID; created only when everything it is made from is there.
    let instance: ConditionVerdict;
    if (current.spec.providerID) {
      instance = { status: 'True', reason: PROVISIONED_REASON, message: `instance ${current.spec.providerID} exists` };
    } else {
      const blocker = await this.instance.provisioningBlocker(current, owner, cluster, claims.verdict, context);
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
      const registered = await this.node.register(current, owner, cluster, claims.addresses, context);
      node = registered.verdict;
      requeueAfterMs = registered.requeueAfterMs ?? requeueAfterMs;
    }
    conditions = setCondition(conditions, conditionOf(NODE_PROVISIONED_CONDITION, node, generation), now);
    conditions = setCondition(
      conditions,
      summarizeConditions({
        conditions,
        forConditionTypes: [IP_ADDRESSES_READY_CONDITION, INSTANCE_PROVISIONED_CONDITION, NODE_PROVISIONED_CONDITION],
        observedGeneration: generation,
      }),
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

  private async reconcileDelete(
    simMachine: SimMachine,
    cluster: StoredCluster | undefined,
    context: ReconcileContext,
  ): Promise<Result> {
    if (!hasFinalizer(simMachine, SIM_MACHINE_FINALIZER)) return {};
    await this.node.deregister(simMachine, cluster, context);
    // Explicit deletes: the owner reference alone only works where kube-controller-manager's garbage collector runs.
    const remaining = await this.claimsStep.release(simMachine, context);
    const result = await finishDeletion(
      this.deps,
      { resource: SIM_MACHINE_RESOURCE, object: simMachine, finalizer: SIM_MACHINE_FINALIZER },
      context,
      {
        waitingFor:
          remaining.length > 0
            ? `waiting for ${remaining.length} IPAddressClaims to be deleted: ${remaining.join(', ')}`
            : undefined,
        writeConditions: (conditions) =>
          this.writeStatus(simMachine, { ...(simMachine.status ?? {}), conditions }, context),
      },
    );
    if (remaining.length === 0) context.logger.info('claims gone, finalizer removed');
    return result;
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
