import type { ReconcileContext } from '@tally-ipam/controller-kit/controller';
import type { DeviceStatus, PoolReference, SimMachine } from '../api/v1alpha1/types.js';
import type { StoredClaim } from '../resources.js';
import { deviceToken, ipAddressClaimName } from '../util/claim-name.js';
import { type ClaimProgress, type ConditionVerdict, ipAddressesCondition } from '../util/conditions.js';
import {
  claimAddress,
  deleteAddressClaim,
  ownedAddressClaims,
  releaseAddressClaims,
} from '../util/ip-address-claim.js';
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
    const desired = desiredClaims(simMachine);
    const progress: ClaimProgress[] = [];
    const bound: ClaimedAddress[] = [];
    const mismatches: string[] = [];
    const created: string[] = [];
    for (const want of desired) {
      const request = { name: want.name, clusterName: owner.clusterName, poolRef: want.poolRef };
      const step = await claimAddress(this.deps, simMachine, request, context.signal);
      switch (step.state) {
        case 'Created':
          context.logger.info({ claim: want.name, pool: want.poolRef }, 'IPAddressClaim requested');
          created.push(want.name);
          progress.push({ name: want.name, state: 'Missing' });
          break;
        case 'Deleting':
          progress.push({ name: want.name, state: 'Missing' });
          break;
        case 'Conflict':
        case 'Pending':
        case 'AddressMissing':
          progress.push(step);
          break;
        case 'Bound':
          if (step.mismatch) mismatches.push(step.mismatch);
          progress.push({ name: want.name, state: 'Bound' });
          bound.push({
            claimName: want.name,
            device: want.device,
            deviceIndex: want.deviceIndex,
            address: step.address.address,
            prefix: step.address.prefix,
            gateway: step.address.gateway,
          });
          break;
      }
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
    return ownedAddressClaims(this.deps, simMachine);
  }

  async delete(claim: StoredClaim, context: ReconcileContext): Promise<void> {
    await deleteAddressClaim(this.deps.client, claim, context.signal);
    context.logger.info({ claim: claim.metadata.name }, 'IPAddressClaim deleted');
  }

  /** The release step of the SimMachine's deletion (see `releaseAddressClaims`): the claims still there. */
  release(simMachine: SimMachine, context: ReconcileContext): Promise<string[]> {
    const names = desiredClaims(simMachine).map((want) => want.name);
    return releaseAddressClaims(this.deps, simMachine, names, context.signal);
  }
}
