// The SimMachineTemplate controller: its reconciler (autoscale-from-zero status) and its one watch.
export { newSimMachineTemplateController } from './controller.js';
export { SimMachineTemplateReconciler, type SimMachineTemplateReconcilerDeps } from './reconciler.js';
