// The SimMachinePool controller: its reconciler and its watches.
export { newSimMachinePoolController } from './controller.js';
export { poolInstances, SimMachinePoolReconciler, type SimMachinePoolReconcilerDeps } from './reconciler.js';
