import { canScaleFromZero, NodeCapacity } from '@tally-ipam/machinepool';
import { withTestNamespace } from '@tally-ipam/testenv/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SIM_GROUP, SIM_MACHINE_TEMPLATE_RESOURCE, type SimMachineTemplate } from '../src/index.js';
import { eventually, type RunningProviders, startProviders } from './support.js';

let providers: RunningProviders;

beforeAll(async () => {
  providers = await startProviders();
});

afterAll(async () => {
  await providers?.stop();
});

/** The template once it announces a capacity (what cluster-autoscaler reads to scale a MachineDeployment from zero). */
async function announced(namespace: string, name: string): Promise<SimMachineTemplate> {
  return eventually(`SimMachineTemplate ${name} announcing its size`, async () => {
    const template = await providers.client.get(SIM_MACHINE_TEMPLATE_RESOURCE, { namespace, name });
    return template.status?.capacity ? template : undefined;
  });
}

describe('SimMachineTemplate', () => {
  it('announces the size of the machines it makes for autoscaling from zero, the default size when none is given', async () => {
    const ns = await withTestNamespace(undefined, 'sim-template-size');
    const { client } = providers;
    // cluster-autoscaler finds the template through MachineDeployment.spec.template.spec.infrastructureRef and reads it
    // as the lower-case kind + "s".
    expect(SIM_MACHINE_TEMPLATE_RESOURCE.plural).toBe(`${'SimMachineTemplate'.toLowerCase()}s`);
    for (const [name, size] of [
      ['large', { cpus: 8, memoryMiB: 16384 }],
      ['default', undefined],
    ] as const) {
      await client.create(SIM_MACHINE_TEMPLATE_RESOURCE, {
        apiVersion: `${SIM_GROUP}/v1alpha1`,
        kind: 'SimMachineTemplate',
        metadata: { name, namespace: ns.name },
        spec: { template: { spec: size ? { size } : {} } },
      });
    }
    const large = await announced(ns.name, 'large');
    expect(large.status).toEqual({
      capacity: { cpu: '8', memory: '16Gi' },
      nodeInfo: { architecture: 'amd64', operatingSystem: 'linux' },
    });
    expect(canScaleFromZero({ capacity: NodeCapacity.parse(large.status?.capacity) })).toBe(true);
    const defaulted = await announced(ns.name, 'default');
    expect(defaulted.status?.capacity).toEqual({ cpu: '2', memory: '4Gi' });
  });
});
