import {
  controllerOwnerOf,
  type KubeObject,
  OWNER_UID_INDEX,
  type SharedInformer,
} from '@tally-ipam/controller-kit/cache';
import type { ObjectKey } from '@tally-ipam/controller-kit/client';
import { formatLabelValue, MACHINEPOOL_NAME_LABEL, type StoredMachinePool } from '@tally-ipam/machinepool';
import { SIM_GROUP, SIM_MACHINE_POOL_KIND } from './api/v1alpha1/constants.js';
import type { StoredAddress, StoredClaim, StoredCluster, StoredMachine } from './resources.js';

// Map functions of the Sim controllers' watches: which Sim objects an event of another kind concerns.

/** The Sim object a CAPI object points at through `infrastructureRef`, if it is of `kind`. */
export function infrastructureRequest(object: StoredCluster | StoredMachine, kind: string): ObjectKey[] {
  return infrastructureRefRequest(object.metadata.namespace, object.spec?.infrastructureRef, kind);
}

export function infrastructureRefRequest(
  namespace: string | undefined,
  ref: { apiGroup: string; kind: string; name: string } | undefined,
  kind: string,
): ObjectKey[] {
  if (!ref || ref.kind !== kind || ref.apiGroup !== SIM_GROUP) return [];
  return [{ namespace, name: ref.name }];
}

/** SimMachine → the SimMachinePools among its owners (a pool's instance has a non-controller reference to it). */
export function poolsOwning(simMachine: KubeObject): ObjectKey[] {
  return (simMachine.metadata.ownerReferences ?? [])
    .filter((ref) => ref.kind === SIM_MACHINE_POOL_KIND && ref.apiVersion.startsWith(`${SIM_GROUP}/`))
    .map((ref) => ({ namespace: simMachine.metadata.namespace, name: ref.name }));
}

/** The SimMachines that carry a MachinePool's labels (CAPI's selection of MachinePool Machines). */
export function instancesOfMachinePool(
  simMachines: SharedInformer<KubeObject>,
  machinePool: StoredMachinePool,
): ObjectKey[] {
  const poolLabel = formatLabelValue(machinePool.metadata.name);
  return simMachines.store
    .list()
    .filter(
      (simMachine) =>
        simMachine.metadata.namespace === machinePool.metadata.namespace &&
        simMachine.metadata.labels?.[MACHINEPOOL_NAME_LABEL] === poolLabel,
    )
    .map((simMachine) => ({ namespace: simMachine.metadata.namespace, name: simMachine.metadata.name }));
}

/** The SimMachines a SimMachinePool owns. */
export function simMachinesOwnedBy(simMachines: SharedInformer<KubeObject>, pool: KubeObject): ObjectKey[] {
  const uid = pool.metadata.uid;
  if (!uid) return [];
  return simMachines.store
    .byIndex(OWNER_UID_INDEX, uid)
    .map((simMachine) => ({ namespace: simMachine.metadata.namespace, name: simMachine.metadata.name }));
}

/** IPAddress → its claim → the claim's controller, if that is a Sim object of `kind`. */
export function addressToClaimOwner(
  claims: SharedInformer<StoredClaim>,
  kind: string,
): (address: StoredAddress) => ObjectKey[] {
  return (address) => {
    const claim = claims.store.get(`${address.metadata.namespace}/${address.spec.claimRef.name}`);
    const owner = claim ? controllerOwnerOf(claim) : undefined;
    if (!owner || owner.kind !== kind || !owner.apiVersion.startsWith(`${SIM_GROUP}/`)) return [];
    return [{ namespace: address.metadata.namespace, name: owner.name }];
  };
}
