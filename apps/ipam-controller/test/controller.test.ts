import { Client } from '@tally-ipam/controller-kit';
import { createTestNamespace, type TestNamespace, testEnv } from '@tally-ipam/testenv/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControllerProcess, servingPort, startController } from './controller-process.js';
import { ADDRESSES, CLAIMS, CLUSTERS, claim, cluster, eventually, field, ipPool, POOLS } from './support.js';

/** The contract path through the built executable, run as a container would run it: with a kubeconfig. */
describe('tally-ipam-controller against a cluster (--kubeconfig)', () => {
  let namespace: TestNamespace;
  let client: Client;
  let controller: ControllerProcess;
  let metricsPort: number;
  const pool = { kind: 'TallyIPPool', name: 'contract' };

  beforeAll(async () => {
    const env = testEnv();
    client = new Client(env.kubeConfig, { fieldManager: 'controller-test' });
    namespace = await createTestNamespace(env.kubeConfig, 'controller');
    await client.create(CLUSTERS, cluster(namespace.name, 'workload'));
    await client.create(POOLS, ipPool(namespace.name, pool.name, { addresses: ['10.200.0.0/29'], prefix: 24 }));
    controller = startController([
      '--kubeconfig',
      env.kubeconfigPath,
      '--namespace',
      namespace.name,
      '--metrics-bind-address=127.0.0.1:0',
      '--health-probe-bind-address=127.0.0.1:0',
      '--webhook-port=0',
    ]);
    metricsPort = await servingPort(controller, 'metrics');
  });

  afterAll(async () => {
    if (controller && controller.child.exitCode === null) await controller.stop('SIGKILL');
    await namespace?.delete();
  });

  it('answers a claim with an IPAddress from the pool and points the claim at it', async () => {
    await client.create(CLAIMS, claim(namespace.name, 'machine-0', pool, 'workload'));

    const address = await eventually('the IPAddress of machine-0', () =>
      client.get(ADDRESSES, { namespace: namespace.name, name: 'machine-0' }),
    );
    // 10.200.0.0/29 in a /24: .0 is listed but is the network address, so the lowest free is .1.
    expect(field(address, 'spec')).toMatchObject({
      address: '10.200.0.1',
      prefix: 24,
      claimRef: { name: 'machine-0' },
      poolRef: { apiGroup: 'ipam.cluster.x-k8s.io', kind: 'TallyIPPool', name: 'contract' },
    });
    const bound = await eventually('machine-0 bound', async () => {
      const object = await client.get(CLAIMS, { namespace: namespace.name, name: 'machine-0' });
      if (field(object, 'status', 'addressRef', 'name') !== 'machine-0') throw new Error('no addressRef yet');
      return object;
    });
    expect(field(bound, 'metadata', 'finalizers')).toEqual(expect.arrayContaining([expect.any(String)]));
  });

  it('exports the pool gauges on /metrics', async () => {
    const series = (state: string) =>
      `tally_ipam_pool_addresses{kind="TallyIPPool",namespace="${namespace.name}",name="contract",state="${state}"}`;
    const text = await eventually('pool gauges counting the claim', async () => {
      const body = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      if (!body.includes(`${series('used')} 1`)) throw new Error(`no used=1 series yet`);
      return body;
    });
    // 8 listed; the subnet is the /24, so only its network address .0 is among them: 7 in total, 1 used, 6 free.
    expect(text).toContain(`${series('total')} 7`);
    expect(text).toContain(`${series('free')} 6`);
    expect(text).toContain('controller_runtime_reconcile_total');
  });

  it('stops cleanly on SIGTERM with exit code 0', async () => {
    expect(await controller.stop('SIGTERM')).toBe(0);
    expect(controller.lines.some((line) => line.includes('"msg":"manager stopped"'))).toBe(true);
  });
});
