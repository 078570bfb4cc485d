export * from './constants.js';
export {
  Cluster,
  ClusterSpec,
  ClusterStatus,
  ContractVersionedObjectReference,
  Machine,
  MachineAddress,
  MachinePool,
  MachinePoolSpec,
  MachinePoolStatus,
  MachineSpec,
  MachineStatus,
} from './types.js';
