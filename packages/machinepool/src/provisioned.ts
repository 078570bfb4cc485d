import type { InfraMachinePoolObject } from './contract-fields.js';

/** The status fields that mark an InfraMachinePool provisioned, as CAPI reads it and as the contract doc names it. */
export interface ProvisionedStatus {
  /** Read by CAPI v1.12 (`external.IsReady`) on every MachinePool reconcile. */
  readonly ready: true;
  /** Named by the v1beta2 contract doc; not read by CAPI v1.12 for MachinePools. */
  readonly initialization: { readonly provisioned: true };
}

/** The fields to merge into an InfraMachinePool's status once it is provisioned. Keep writing them afterwards. */
export function provisionedStatus(): ProvisionedStatus {
  return { ready: true, initialization: { provisioned: true } };
}

/**
 * Whether CAPI v1.12 considers the pool provisioned: `status.ready` is true. `initialization.provisioned` alone does
 * not count — the MachinePool controller never reads it (contract doc and code disagree; README).
 */
export function isInfraMachinePoolProvisioned(infraMachinePool: Pick<InfraMachinePoolObject, 'status'>): boolean {
  return infraMachinePool.status?.ready === true;
}
