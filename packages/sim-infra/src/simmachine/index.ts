// The SimMachine controller: its reconciler, split along its steps (claims, instance, node), and its watches.
export { type DesiredClaim, desiredClaims, SimMachineClaims } from './claims.js';
export { newSimMachineController } from './controller.js';
export type { InstanceOwner, SimMachineReconcilerDeps } from './deps.js';
export { SimMachineReconciler } from './reconciler.js';
