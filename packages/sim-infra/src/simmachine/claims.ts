import { OWNER_UID_INDEX } from '@tally-ipam/controller-kit/cache';
import { getCondition } from '@tally-ipam/controller-kit/capi';
import { isControlledBy, isNotFound } from '@tally-ipam/controller-kit/client';
import type { ReconcileContext } from '@tally-ipam/controller-kit/controller';
import type { DeviceStatus, PoolReference, SimMachine } from '../api/v1alpha1/types.js';
import { CLAIM_RESOURCE, type StoredClaim } from '../resources.js';
import { deviceToken, ipAddressClaimName } from '../util/claim-name.js';
import { type ClaimProgress, type ConditionVerdict, ipAddressesCondition } from '../util/conditions.js';
import { createIPAddressClaim } from '../util/ip-address-claim.js';
import { type ClaimedAddress, validateClaimedAddresses } from '../util/ip-addresses.js';

import type { InstanceOwner, SimMachineReconcilerDeps } from './deps.js';

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

export interface ClaimsOutcome {
  readonly verdict: ConditionVerdict;
  readonly addresses: ClaimedAddress[];
  readonly devices: DeviceStatus[];
  readonly created: string[];
}

/**
 * The IPAM step of a SimMachine's reconcile (the IPAM contract's consumer side): one IPAddressClaim per (device, pool),
 * where each stands, the addresses validated; and the claims to delete with the machine.
 */
export class SimMachineClaims {
  constructor(private readonly deps: SimMachineReconcilerDeps) {}

  /**
   * Creates the missing claims and reads where every claim stands. A claim of the right name that another object
   * controls is reported, never adopted: it could hold someone else's address.
   */
  async reconcile(simMachine: SimMachine, owner: InstanceOwner, context: ReconcileContext): Promise<ClaimsOutcome> {
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

  /** The claim of one (device, pool), owned by the SimMachine (see `createIPAddressClaim`). */
  private async createClaim(
    simMachine: SimMachine,
    clusterName: string,
    want: DesiredClaim,
    context: ReconcileContext,
  ): Promise<void> {
    const claim = { name: want.name, clusterName, poolRef: want.poolRef };
    if (await createIPAddressClaim(this.deps.client, simMachine, claim, context.signal)) {
      context.logger.info({ claim: want.name, pool: want.poolRef }, 'IPAddressClaim created');
    }
  }

  /** Claims this SimMachine controls that its spec no longer asks for (e.g. left over by an older naming). */
  private async deleteUndesiredClaims(
    simMachine: SimMachine,
    wanted: ReadonlySet<string>,
    context: ReconcileContext,
  ): Promise<void> {
    for (const claim of this.owned(simMachine)) {
      if (wanted.has(claim.metadata.name) || claim.metadata.deletionTimestamp) continue;
      await this.delete(claim, context);
    }
  }

  owned(simMachine: SimMachine): StoredClaim[] {
    const uid = simMachine.metadata.uid;
    if (!uid) return [];
    return this.deps.claims.store
      .byIndex(OWNER_UID_INDEX, uid)
      .filter(
        (claim) => claim.metadata.namespace === simMachine.metadata.namespace && isControlledBy(claim, simMachine),
      );
  }

  async live(namespace: string, name: string, context: ReconcileContext): Promise<StoredClaim | undefined> {
    try {
      return await this.deps.client.get(CLAIM_RESOURCE, { namespace, name }, { signal: context.signal });
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  async delete(claim: StoredClaim, context: ReconcileContext): Promise<void> {
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

  /**
   * The claims to delete with the SimMachine: those it controls (by the owner index, and by their deterministic
   * names); when the cache shows none, the API server is asked, since a claim created moments ago may not be cached.
   */
  async toDelete(simMachine: SimMachine, context: ReconcileContext): Promise<StoredClaim[]> {
    const namespace = simMachine.metadata.namespace ?? '';
    const remaining = this.owned(simMachine);
    for (const want of desiredClaims(simMachine)) {
      const claim = this.deps.claims.store.get(`${namespace}/${want.name}`);
      if (claim && isControlledBy(claim, simMachine) && !remaining.includes(claim)) remaining.push(claim);
    }
    if (remaining.length === 0) {
      for (const want of desiredClaims(simMachine)) {
        const claim = await this.live(namespace, want.name, context);
        if (claim && isControlledBy(claim, simMachine)) remaining.push(claim);
      }
    }
    return remaining;
  }
}
