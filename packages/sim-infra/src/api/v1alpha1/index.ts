export * from './constants.js';
export { SIM_CRD_LABELS, simCustomResourceDefinitions } from './crds.js';
export {
  APIEndpoint,
  DEVICE_NAME_PATTERN,
  DeviceStatus,
  FailureDomain,
  MachineAddress,
  NetworkDevice,
  PoolReference,
  SimCluster,
  SimClusterSpec,
  SimClusterStatus,
  SimClusterTemplate,
  SimMachine,
  SimMachinePool,
  SimMachinePoolSpec,
  SimMachinePoolStatus,
  SimMachinePoolTemplate,
  SimMachineSpec,
  SimMachineStatus,
  SimMachineTemplate,
  TemplateObjectMeta,
} from './types.js';
