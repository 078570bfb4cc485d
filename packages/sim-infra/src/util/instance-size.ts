import { type AutoscaleFromZeroStatus, autoscaleFromZeroStatus } from '@tally-ipam/machinepool';
import {
  DEFAULT_SIM_INSTANCE_SIZE,
  SIM_NODE_ARCHITECTURE,
  SIM_NODE_OPERATING_SYSTEM,
} from '../api/v1alpha1/constants.js';
import type { SimInstanceSize } from '../api/v1alpha1/types.js';

const BYTES_PER_MIB = 1024 * 1024;

/**
 * What an instance of this size offers, in the form the cluster autoscaler reads from a SimMachinePool
 * (`status.capacity`, `status.nodeInfo`). The simulated kubelet reports the same capacity on the instance's Node, so
 * the Node the autoscaler imagines when scaling from zero is the Node that then registers.
 */
export function simInstanceAutoscaleStatus(size: SimInstanceSize | undefined): AutoscaleFromZeroStatus {
  const { cpus, memoryMiB } = size ?? DEFAULT_SIM_INSTANCE_SIZE;
  return autoscaleFromZeroStatus({
    size: { cpuMillicores: cpus * 1000, memoryBytes: memoryMiB * BYTES_PER_MIB },
    architecture: SIM_NODE_ARCHITECTURE,
    operatingSystem: SIM_NODE_OPERATING_SYSTEM,
  });
}
