// The SimCluster controller: its reconciler and its watches.
export { newSimClusterController } from './controller.js';
export { isExternallyManaged, SimClusterReconciler, type SimClusterReconcilerDeps } from './reconciler.js';
