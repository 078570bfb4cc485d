import { randomBytes } from 'node:crypto';
import { CLUSTER_GROUP, MACHINEPOOL_KIND } from '@tally-ipam/api-types';
import { type SharedInformer, sameJSON } from '@tally-ipam/controller-kit/cache';
import { type ConditionInput, getCondition, isPaused, setCondition } from '@tally-ipam/controller-kit/capi';
import {
  type Client,
  findOwnerReference,
  hasFinalizer,
  isNotFound,
  isOwnedBy,
} from '@tally-ipam/controller-kit/client';
import type { ReconcileContext, Reconciler, Request, Result } from '@tally-ipam/controller-kit/controller';
import {
  bootstrapDataSecretName,
  formatLabelValue,
  MACHINEPOOL_NAME_LABEL,
  machinePoolStatusFromInstances,
  type PoolInstance,
  REPLICAS_READY_CONDITION,
  reconcileMachinePoolMachines,
  type StoredMachinePool,
  summarizeReadyCondition,
  writeInfraMachinePoolState,
} from '@tally-ipam/machinepool';
import {
  READY_CONDITION,
  SIM_MACHINE_KIND,
  SIM_MACHINE_POOL_FINALIZER,
  WAITING_FOR_BOOTSTRAP_DATA_REASON,
} from '../api/v1alpha1/constants.js';
import type { SimMachine, SimMachinePool } from '../api/v1alpha1/types.js';
import { finishDeletion, pauseThenFinalizer } from '../lifecycle.js';
import {
  MACHINE_RESOURCE,
  SIM_MACHINE_POOL_RESOURCE,
  SIM_MACHINE_RESOURCE,
  type StoredCluster,
  type StoredMachine,
} from '../resources.js';
import { shortenName } from '../util/claim-name.js';
import { simInstanceAutoscaleStatus } from '../util/instance-size.js';

/** Characters of randomness in an instance name (`<pool>-<hex>`), as CAPD's `worker-<rand6>`. */
const INSTANCE_SUFFIX_BYTES = 3;
/** Scale-down waits for CAPI's MachinePool controller to create the Machines it deletes through. */
const WAITING_FOR_MACHINES_POLL_MS = 5_000;

/** The reconciler reads only the informers' stores (a test can hand it stores of its own). */
export interface SimMachinePoolReconcilerDeps {
  readonly client: Client;
  readonly simMachinePools: Pick<SharedInformer<SimMachinePool>, 'store'>;
  /** Only the delete path reads it; scale-up lists the instances live (see `listInstances`). */
  readonly simMachines: Pick<SharedInformer<SimMachine>, 'store'>;
  readonly machinePools: Pick<SharedInformer<StoredMachinePool>, 'store'>;
  readonly machines: Pick<SharedInformer<StoredMachine>, 'store'>;
  readonly clusters: Pick<SharedInformer<StoredCluster>, 'store'>;
  readonly now: () => Date;
}

/** The pool's instances: SimMachines labelled for its MachinePool and owned by the pool (MachinePool Machines). */
export function poolInstances(
  simMachines: readonly SimMachine[],
  pool: SimMachinePool,
  machinePool: StoredMachinePool,
): SimMachine[] {
  const poolLabel = formatLabelValue(machinePool.metadata.name);
  return simMachines.filter(
    (simMachine) =>
      simMachine.metadata.namespace === pool.metadata.namespace &&
      simMachine.metadata.labels?.[MACHINEPOOL_NAME_LABEL] === poolLabel &&
      isOwnedBy(simMachine, pool),
  );
}

function instanceOf(simMachine: SimMachine, version: string | undefined): PoolInstance {
  return {
    instanceName: simMachine.metadata.name,
    providerID: simMachine.spec.providerID,
    ready: getCondition(simMachine.status?.conditions, READY_CONDITION)?.status === 'True',
    addresses: simMachine.status?.addresses,
    version,
  };
}

/**
 * Reconciles SimMachinePools, following the InfraMachinePool contract as CAPI v1.12's MachinePool controller reads it,
 * with MachinePool Machines (`status.infrastructureMachineKind: SimMachine`): each replica is a SimMachine (non-controller
 * owner reference to the pool, CAPI's cluster-name and pool-name labels) that claims its own addresses and registers
 * its own Node like any SimMachine. Scale-up creates SimMachines; scale-down and vanished instances go through the owner
 * Machine (CAPI deletes the SimMachine), never by deleting a SimMachine behind CAPI's back. The pool reports a sorted
 * `spec.providerIDList`, `status.replicas`, `status.instances`, and both `status.ready` (what the v1.12 code reads) and
 * `status.initialization.provisioned` (what the contract doc names), latched once true.
 */
export class SimMachinePoolReconciler implements Reconciler {
  constructor(private readonly deps: SimMachinePoolReconcilerDeps) {}

  async reconcile(request: Request, context: ReconcileContext): Promise<Result> {
    const pool = this.deps.simMachinePools.store.get(`${request.namespace}/${request.name}`);
    if (!pool) return {};
    const namespace = pool.metadata.namespace ?? '';
    const machinePoolRef = findOwnerReference(pool, { apiGroup: CLUSTER_GROUP, kind: MACHINEPOOL_KIND });
    const machinePool = machinePoolRef
      ? this.deps.machinePools.store.get(`${namespace}/${machinePoolRef.name}`)
      : undefined;
    const cluster = machinePool
      ? this.deps.clusters.store.get(`${namespace}/${machinePool.spec.clusterName}`)
      : undefined;

    if (pool.metadata.deletionTimestamp) {
      if (cluster && isPaused(cluster, pool)) return {};
      return this.reconcileDelete(pool, context);
    }
    if (!machinePool || !cluster) {
      context.logger.debug('waiting for the owner MachinePool and its Cluster');
      return {};
    }
    const started = await pauseThenFinalizer(
      this.deps,
      { resource: SIM_MACHINE_POOL_RESOURCE, object: pool, finalizer: SIM_MACHINE_POOL_FINALIZER, cluster },
      context,
    );
    if (!started) return {};
    const { now, generation } = started;
    let { conditions, object: current } = started;

    const version = machinePool.spec.template.spec.version;
    // Announced whatever the replica count, so that the cluster autoscaler can scale the pool from zero.
    const autoscaleFromZero = simInstanceAutoscaleStatus(current.spec.template.size);
    if (!bootstrapDataSecretName(machinePool)) {
      // CAPD's DockerMachinePool creates nothing before the bootstrap data exists; neither does Sim.
      const waiting: ConditionInput = {
        type: READY_CONDITION,
        status: 'False',
        reason: WAITING_FOR_BOOTSTRAP_DATA_REASON,
        message: `MachinePool ${machinePool.metadata.name} has no spec.template.spec.bootstrap.dataSecretName yet`,
        observedGeneration: generation,
      };
      conditions = setCondition(conditions, waiting, now);
      await this.writeStatus(
        current,
        { conditions, infrastructureMachineKind: SIM_MACHINE_KIND, ...autoscaleFromZero },
        context,
      );
      return {};
    }

    const instances = (await this.listInstances(current, machinePool, context)).filter(
      (simMachine) => !simMachine.metadata.deletionTimestamp,
    );
    // Scale up: new instances get fresh names; reconcileMachinePoolMachines creates their SimMachines.
    const desiredReplicas = machinePool.spec.replicas ?? 1;
    const newNames: string[] = [];
    for (let missing = desiredReplicas - instances.length; missing > 0; missing--) {
      newNames.push(shortenName(`${current.metadata.name}-${randomBytes(INSTANCE_SUFFIX_BYTES).toString('hex')}`));
    }
    const existing = new Map(instances.map((simMachine) => [simMachine.metadata.name, simMachine]));
    const machinesResult = await reconcileMachinePoolMachines({
      client: this.deps.client,
      infraMachinePool: current,
      machinePool,
      instances: [
        ...instances.map((simMachine) => instanceOf(simMachine, version)),
        ...newNames.map((instanceName) => ({ instanceName, ready: false })),
      ],
      infraMachineResource: SIM_MACHINE_RESOURCE,
      // An existing SimMachine keeps its network and size (both immutable); new ones take the template's.
      template: (instance) => {
        const { network, size } = existing.get(instance.instanceName)?.spec ?? current.spec.template;
        return { ...(network ? { network } : {}), ...(size ? { size } : {}) };
      },
      logger: context.logger,
      signal: context.signal,
    });
    if (machinesResult.created.length > 0) {
      context.logger.info({ created: machinesResult.created }, 'instances created');
    }
    // An instance whose Machine is going (scale-down) no longer serves: CAPI deletes its SimMachine next. It still
    // counted above, so that the window until then never creates a replacement.
    const deletedMachines = new Set(machinesResult.deletedMachines);
    const serving = instances.filter((simMachine) => !this.machineGoing(simMachine, deletedMachines));

    const state = machinePoolStatusFromInstances({
      instances: serving.map((simMachine) => instanceOf(simMachine, version)),
      desiredReplicas,
      wasProvisioned: current.status?.ready === true,
      observedGeneration: generation,
      infrastructureMachineKind: SIM_MACHINE_KIND,
    });
    conditions = setCondition(conditions, state.replicasReadyCondition, now);
    conditions = setCondition(
      conditions,
      summarizeReadyCondition({
        conditions,
        dependsOn: [REPLICAS_READY_CONDITION],
        observedGeneration: generation,
      }),
      now,
    );
    const written = await writeInfraMachinePoolState({
      client: this.deps.client,
      resource: SIM_MACHINE_POOL_RESOURCE,
      infraMachinePool: current,
      providerIDList: state.providerIDList,
      status: { ...state.status, ...autoscaleFromZero, conditions, observedGeneration: generation },
      signal: context.signal,
    });
    current = written.object;
    return machinesResult.waitingForMachine.length > 0 ? { requeueAfterMs: WAITING_FOR_MACHINES_POLL_MS } : {};
  }

  /**
   * Deletes the pool's instances — through their owner Machines where CAPI made them (the Machine controller then
   * deletes the SimMachine, drains and removes the Node), directly where it has not yet — and waits until they are
   * gone before the finalizer goes. CAPI's MachinePool controller does not delete MachinePool Machines itself.
   */
  private async reconcileDelete(pool: SimMachinePool, context: ReconcileContext): Promise<Result> {
    if (!hasFinalizer(pool, SIM_MACHINE_POOL_FINALIZER)) return {};
    const namespace = pool.metadata.namespace ?? '';
    const instances = this.deps.simMachines.store
      .list()
      .filter((simMachine) => simMachine.metadata.namespace === namespace && isOwnedBy(simMachine, pool));
    for (const simMachine of instances) {
      if (simMachine.metadata.deletionTimestamp) continue;
      const machineRef = findOwnerReference(simMachine, { apiGroup: CLUSTER_GROUP, kind: 'Machine' });
      const machine = machineRef ? this.deps.machines.store.get(`${namespace}/${machineRef.name}`) : undefined;
      try {
        if (machine) {
          if (!machine.metadata.deletionTimestamp) {
            await this.deps.client.delete(
              MACHINE_RESOURCE,
              { namespace, name: machine.metadata.name },
              { preconditions: { uid: machine.metadata.uid }, signal: context.signal },
            );
          }
        } else {
          await this.deps.client.delete(
            SIM_MACHINE_RESOURCE,
            { namespace, name: simMachine.metadata.name },
            { preconditions: { uid: simMachine.metadata.uid }, signal: context.signal },
          );
        }
      } catch (error) {
        if (!isNotFound(error)) throw error;
      }
    }
    return finishDeletion(
      this.deps,
      { resource: SIM_MACHINE_POOL_RESOURCE, object: pool, finalizer: SIM_MACHINE_POOL_FINALIZER },
      context,
      {
        waitingFor: instances.length > 0 ? `waiting for ${instances.length} instances to be deleted` : undefined,
        writeConditions: (conditions) => this.writeStatus(pool, { conditions }, context),
      },
    );
  }

  /**
   * The pool's instances as the API server has them (CAPD, too, counts what Docker reports): the informer may not yet
   * show the SimMachines this reconciler created a moment ago (a retry after a 409 runs 5 ms later), and counting from
   * it creates replacements under fresh names, a surplus that scale-down, which goes through owner Machines, may
   * never remove (without CAPI there are none; with it, healthy instances are churned).
   */
  private async listInstances(
    pool: SimMachinePool,
    machinePool: StoredMachinePool,
    context: ReconcileContext,
  ): Promise<SimMachine[]> {
    const list = await this.deps.client.listAll(SIM_MACHINE_RESOURCE, {
      namespace: pool.metadata.namespace,
      // The pool-name label only, as `poolInstances` selects: one that lost its cluster-name label still counts.
      labelSelector: `${MACHINEPOOL_NAME_LABEL}=${formatLabelValue(machinePool.metadata.name)}`,
      signal: context.signal,
    });
    return poolInstances(list.items, pool, machinePool);
  }

  /** The instance's owner Machine was just deleted or is being deleted (a Machine missing from the cache may be new). */
  private machineGoing(simMachine: SimMachine, justDeleted: ReadonlySet<string>): boolean {
    const ref = findOwnerReference(simMachine, { apiGroup: CLUSTER_GROUP, kind: 'Machine' });
    if (!ref) return false;
    if (justDeleted.has(ref.name)) return true;
    const machine = this.deps.machines.store.get(`${simMachine.metadata.namespace}/${ref.name}`);
    return machine?.metadata.deletionTimestamp !== undefined && machine.metadata.deletionTimestamp !== '';
  }

  private async writeStatus(
    pool: SimMachinePool,
    status: Readonly<Record<string, unknown>>,
    context: ReconcileContext,
  ): Promise<void> {
    const current: Record<string, unknown> = pool.status ?? {};
    const changed = Object.entries(status).some(([key, value]) => !sameJSON(current[key], value));
    if (!changed) return;
    try {
      await this.deps.client.patchStatus(SIM_MACHINE_POOL_RESOURCE, pool, status, { signal: context.signal });
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }
}
