import { CustomObjectsApi, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import {
  IPAM_GROUP,
  TALLY_GROUP,
  TALLY_IP_POOL_KIND,
  TALLY_V1ALPHA1_API_VERSION,
  TALLY_V1ALPHA1_VERSION,
  TallyIPPoolStatus,
} from '@tally-ipam/api-types';
import { Client, isNotFound } from '@tally-ipam/controller-kit/client';
import { POOL_IN_USE_MESSAGE, POOL_RESOURCES, poolWebhookName } from '@tally-ipam/ipam-provider';
import {
  ADDRESS_RESOURCE,
  CLUSTER_RESOURCE,
  SIM_GROUP,
  SIM_MACHINE_RESOURCE,
  SIM_MACHINE_TEMPLATE_RESOURCE,
  SIM_V1ALPHA1_API_VERSION,
  SIM_V1ALPHA1_VERSION,
} from '@tally-ipam/sim-infra';
import { warningTexts } from '@tally-ipam/testenv';
import { testEnv, withTestNamespace } from '@tally-ipam/testenv/vitest';
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import { z } from 'zod';
import { WEBHOOKS_PROVIDE_KEY } from './apps.js';
import {
  apiServerEndpoint,
  createClusterOnSim,
  createMachineOnSim,
  eventually,
  logsHint,
  rejection,
  runningApps,
} from './harness.js';

const POOL_RESOURCE = POOL_RESOURCES[TALLY_IP_POOL_KIND];
const POOL_PLURAL = { group: TALLY_GROUP, version: TALLY_V1ALPHA1_VERSION, plural: 'tallyippools' } as const;
const POOL_SPEC = { addresses: ['10.81.0.10-10.81.0.19'], prefix: 24, gateway: '10.81.0.1' };

/** The `Status` the API server answers a refused request with. */
const Status = z.looseObject({ code: z.number(), message: z.string() });

const PoolAddresses = z.looseObject({ spec: z.looseObject({ addresses: z.array(z.string()) }) });

/** A refused request's `Status`, parsed. */
async function refused(call: Promise<unknown>): Promise<z.infer<typeof Status>> {
  const { body } = await rejection(call);
  return Status.parse(JSON.parse(body));
}

// The apps' admission webhooks, registered from their shipped manifests by the global setup. On an external cluster
// they are not registered (its API server cannot call this machine's loopback; see the README) and the setup's
// provide says so: these tests would then prove nothing, so they fail instead of passing silently.
function requireWebhooks(): void {
  if (!inject(WEBHOOKS_PROVIDE_KEY)) {
    throw new Error('the apps run without admission webhooks (external cluster): run admission.test.ts locally');
  }
}

describe("the apps' admission webhooks, registered from their shipped manifests", () => {
  it('refuses deleting or shrinking a pool whose addresses a Cluster uses, warns on an overlap, and lets the pool go once the Cluster is deleted', async () => {
    runningApps();
    requireWebhooks();
    const env = testEnv();
    const hint = logsHint(env);
    const ns = await withTestNamespace(env.kubeConfig, 'e2e-admission');
    const namespace = ns.name;
    const client = new Client(env.kubeConfig, { fieldManager: 'tally-e2e' });
    onTestFinished(() => client.close());
    const objects = env.kubeConfig.makeApiClient(CustomObjectsApi);
    const key = (name: string): { namespace: string; name: string } => ({ namespace, name });
    const poolName = 'machines';
    const machineName = `worker-${namespace.split('-').pop() ?? namespace}`;

    await client.create(POOL_RESOURCE, {
      apiVersion: TALLY_V1ALPHA1_API_VERSION,
      kind: TALLY_IP_POOL_KIND,
      metadata: key(poolName),
      spec: POOL_SPEC,
    });
    await createClusterOnSim(client, env, key('admission'), { controlPlaneEndpoint: apiServerEndpoint(env) });
    await createMachineOnSim(client, key(machineName), 'admission', {
      network: {
        devices: [
          { name: 'eth0', addressesFromPools: [{ apiGroup: IPAM_GROUP, kind: TALLY_IP_POOL_KIND, name: poolName }] },
        ],
      },
    });
    const address = await eventually(
      "the SimMachine's address from the pool",
      async () => {
        const addresses = (await client.list(ADDRESS_RESOURCE, { namespace })).items;
        return addresses.find((item) => item.spec.poolRef.name === poolName);
      },
      { hint },
    );
    const allocated = address.spec.address;
    const poolUsed = (used: number): Promise<true> =>
      eventually(
        `the ${poolName} pool to count ${used} used addresses`,
        async () => {
          const pool = await client.get(POOL_RESOURCE, key(poolName));
          return TallyIPPoolStatus.parse(pool.status ?? {}).ipAddresses?.used === used ? true : undefined;
        },
        { hint },
      );
    await poolUsed(1);
    // The webhook reads the IPAddresses from the IPAM controller's informer. Neither this test's list nor the pool's
    // count (kept from the ledger entry, written before the IPAddress) says that informer has shown the new IPAddress
    // yet: wait until a dry-run delete is refused for it.
    await eventually(
      'the pool webhook to count the allocated address (a dry-run delete refused)',
      async () => {
        const dryRun = objects.deleteNamespacedCustomObject({
          ...POOL_PLURAL,
          namespace,
          name: poolName,
          dryRun: 'All',
        });
        return (await refused(dryRun)).message.includes(`[${allocated}]`) || undefined;
      },
      { hint },
    );

    // Deleting the pool is refused, naming the pool and the address.
    const deleteRefused = await refused(
      objects.deleteNamespacedCustomObject({ ...POOL_PLURAL, namespace, name: poolName }),
    );
    expect(deleteRefused.code).toBe(400);
    expect(deleteRefused.message).toBe(
      `admission webhook "${poolWebhookName(TALLY_IP_POOL_KIND)}" denied the request: ${POOL_IN_USE_MESSAGE} ` +
        `${TALLY_IP_POOL_KIND} ${namespace}/${poolName} has 1 allocated: [${allocated}]`,
    );

    // Shrinking it so the address falls outside is refused, listing the address.
    const shrinkRefused = await refused(
      objects.patchNamespacedCustomObject(
        { ...POOL_PLURAL, namespace, name: poolName, body: { spec: { addresses: ['10.81.0.100-10.81.0.109'] } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
    );
    expect(shrinkRefused.code).toBe(400);
    expect(shrinkRefused.message).toContain(
      `admission webhook "${poolWebhookName(TALLY_IP_POOL_KIND)}" denied the request: ` +
        `pool addresses do not contain allocated addresses: [${allocated}] (1 IPAddress; e.g. ${allocated} of claim ` +
        `${address.spec.claimRef.name} `,
    );
    const kept = PoolAddresses.parse(await client.get(POOL_RESOURCE, key(poolName)));
    expect(kept.spec.addresses).toEqual(POOL_SPEC.addresses);

    // An overlapping pool is admitted, with a warning naming the pool it overlaps and the shared range.
    const overlapping = await objects.createNamespacedCustomObjectWithHttpInfo({
      ...POOL_PLURAL,
      namespace,
      body: {
        apiVersion: TALLY_V1ALPHA1_API_VERSION,
        kind: TALLY_IP_POOL_KIND,
        metadata: { name: 'overlapping' },
        spec: { addresses: ['10.81.0.15-10.81.0.30'], prefix: 24 },
      },
    });
    expect(overlapping.httpStatusCode).toBe(201);
    expect(warningTexts(overlapping.headers.warning)).toContain(
      `overlaps ${TALLY_IP_POOL_KIND} ${namespace}/${poolName} in 10.81.0.15-10.81.0.19; ` +
        'each address there goes to the first claim of either pool',
    );

    // Once the Cluster is gone (its Machine, SimMachine, claim and address with it), the pool may go.
    await client.delete(CLUSTER_RESOURCE, key('admission'));
    await eventually(
      'the Cluster, its SimMachine and its IPAddress to be gone',
      async () => {
        const left = [
          ...(await client.list(CLUSTER_RESOURCE, { namespace })).items,
          ...(await client.list(SIM_MACHINE_RESOURCE, { namespace })).items,
          ...(await client.list(ADDRESS_RESOURCE, { namespace })).items,
        ];
        return left.length === 0 ? true : undefined;
      },
      { hint },
    );
    await poolUsed(0);
    for (const name of [poolName, 'overlapping']) {
      await objects.deleteNamespacedCustomObject({ ...POOL_PLURAL, namespace, name });
    }
    await eventually(
      'both pools to be gone (Tally removes its finalizer)',
      async () => {
        for (const name of [poolName, 'overlapping']) {
          const gone = await client.get(POOL_RESOURCE, key(name)).then(
            () => false,
            (error: unknown) => {
              if (isNotFound(error)) return true;
              throw error;
            },
          );
          if (!gone) return undefined;
        }
        return true;
      },
      { hint },
    );
  });

  it("refuses changing a SimMachineTemplate's spec.template.spec, naming the field; its metadata may change", async () => {
    runningApps();
    requireWebhooks();
    const env = testEnv();
    const ns = await withTestNamespace(env.kubeConfig, 'e2e-admission-templates');
    const client = new Client(env.kubeConfig, { fieldManager: 'tally-e2e' });
    onTestFinished(() => client.close());
    const objects = env.kubeConfig.makeApiClient(CustomObjectsApi);
    const template = { group: SIM_GROUP, version: SIM_V1ALPHA1_VERSION, plural: 'simmachinetemplates' } as const;
    const devicesOn = (pool: string) => ({
      network: {
        devices: [
          { name: 'eth0', addressesFromPools: [{ apiGroup: IPAM_GROUP, kind: TALLY_IP_POOL_KIND, name: pool }] },
        ],
      },
    });
    await client.create(SIM_MACHINE_TEMPLATE_RESOURCE, {
      apiVersion: SIM_V1ALPHA1_API_VERSION,
      kind: 'SimMachineTemplate',
      metadata: { name: 'workers', namespace: ns.name },
      spec: { template: { metadata: { labels: { role: 'worker' } }, spec: devicesOn('pool-a') } },
    });
    const patch = (body: object) =>
      objects.patchNamespacedCustomObject(
        { ...template, namespace: ns.name, name: 'workers', body },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );

    const specRefused = await refused(patch({ spec: { template: { spec: devicesOn('pool-b') } } }));

    expect(specRefused.code).toBe(422);
    expect(specRefused.message).toContain(
      `admission webhook "validation.simmachinetemplate.${SIM_GROUP}" denied the request: ` +
        `SimMachineTemplate.${SIM_GROUP} "workers" is invalid: spec.template.spec: Forbidden: ` +
        'SimMachineTemplate spec.template.spec is immutable',
    );
    await patch({ spec: { template: { metadata: { labels: { role: 'infra' } } } } });
    const stored = await client.get(SIM_MACHINE_TEMPLATE_RESOURCE, { namespace: ns.name, name: 'workers' });
    expect(stored.spec.template.metadata?.labels).toEqual({ role: 'infra' });
    expect(stored.spec.template.spec.network?.devices[0]?.addressesFromPools?.[0]?.name).toBe('pool-a');
  });
});
