import type { MachinePool } from '@tally-ipam/api-types';

/**
 * The bootstrap data Secret of a MachinePool's instances: `spec.template.spec.bootstrap.dataSecretName`. CAPI's
 * MachinePool controller copies it there from the bootstrap config once the config reports its Secret created (or
 * the user sets it directly). Undefined until then.
 */
export function bootstrapDataSecretName(machinePool: Pick<MachinePool, 'spec'>): string | undefined {
  const name = machinePool.spec.template.spec.bootstrap?.dataSecretName;
  return name ? name : undefined;
}

/**
 * True once the MachinePool names its bootstrap data Secret — the point from which a provider may create instances
 * (CAPD's DockerMachinePool waits for exactly this). An empty name is not ready.
 */
export function isBootstrapDataReady(machinePool: Pick<MachinePool, 'spec'>): boolean {
  return bootstrapDataSecretName(machinePool) !== undefined;
}
