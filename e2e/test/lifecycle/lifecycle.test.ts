import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiextensionsV1Api, AppsV1Api, CustomObjectsApi, EventsV1Api } from '@kubernetes/client-node';
import { IPAM_GROUP, PROVIDER_NAME_LABEL } from '@tally-ipam/api-types';
import { Client } from '@tally-ipam/controller-kit/client';
import { LEDGER_RESOURCE, POOL_MOVED_AWAY_REASON, POOL_RESOURCES } from '@tally-ipam/ipam-provider';
import { type BuiltRelease, buildRelease, writeStandaloneAssets } from '@tally-ipam/release';
import { CLAIM_RESOURCE, CLUSTER_RESOURCE } from '@tally-ipam/sim-infra';
import { installCRDs } from '@tally-ipam/testenv';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { z } from 'zod';
import { APPS } from '../apps.js';
import { eventually } from '../harness.js';
import { type Clusterctl, expectSuccess, prepareClusterctl } from './clusterctl.js';
import {
  CLUSTER,
  fleetReady,
  heldTwice,
  inventory,
  ledgerMismatch,
  NAMESPACE,
  OTHER_NAMESPACE,
  OUTSIDE_THE_TREE,
  populateFleet,
} from './fleet.js';
import { addressesByClaim, describeCounts, exists, type Inventory } from './inventory.js';
import { type ManagementCluster, startManagementCluster } from './management-cluster.js';

/**
 * A management cluster's life with the real clusterctl, one step after another on the same two clusters (each step
 * starts from what the one before left): installed at the previous release with a fleet of both APIs, upgraded to
 * this tree, moved to a second management cluster and back, Tally deleted and installed again, and finally deleted
 * with its CRDs. After each step every address is held exactly once, by the claim that held it before, with one
 * ledger entry per allocation, and nothing of another provider changed.
 */

const progress = (message: string): void => {
  process.stderr.write(`[lifecycle] ${message}\n`);
};

/** This tree, published as the next minor release after the previous one (both apps carry the same version). */
const NEXT_VERSION = '0.2.0';

const work = mkdtempSync(join(tmpdir(), 'tally-lifecycle-'));
let previous: BuiltRelease;
let clusterctl: Clusterctl;
let source: ManagementCluster;
let target: ManagementCluster;
/** The fleet as the upgrade left it: what every later step keeps (or gives back). */
let fleet: Inventory;

/** An app's `dist/main.js` in a release's tree. */
const mainJsOf = (root: string, app: keyof typeof APPS): string =>
  join(root, app === 'ipam' ? 'apps/ipam-controller' : 'apps/sim-infra-controller', 'dist', 'main.js');

beforeAll(async () => {
  previous = buildRelease({ onProgress: (message) => progress(`previous release: ${message}`) });
  progress(`previous release ${previous.version} from ${previous.commit} in ${previous.root}`);
  clusterctl = await prepareClusterctl(work, { previous, version: NEXT_VERSION });
  [source, target] = await Promise.all([
    startManagementCluster('source', clusterctl, {
      onProgress: progress,
      version: previous.version,
      mainJs: { ipam: mainJsOf(previous.root, 'ipam'), sim: mainJsOf(previous.root, 'sim') },
      // What that release told users to apply.
      metal3CRDs: [join(previous.root, 'packages/api-types/config/metal3/crd')],
    }),
    startManagementCluster('target', clusterctl, { onProgress: progress }),
  ]);
}, 1_800_000);

afterAll(async () => {
  await Promise.all([source?.stop(), target?.stop()]);
  rmSync(work, { recursive: true, force: true });
});

const ProviderList = z.object({
  items: z.array(z.object({ metadata: z.object({ name: z.string() }), version: z.string() })),
});
const CRDList = z.object({
  items: z.array(
    z.object({ metadata: z.object({ name: z.string(), labels: z.record(z.string(), z.string()).optional() }) }),
  ),
});

/** CRD names by the provider label clusterctl deletes by. */
async function crdsByProvider(): Promise<Record<string, string[]>> {
  const list = CRDList.parse(
    await source.kubeConfig().makeApiClient(ApiextensionsV1Api).listCustomResourceDefinition(),
  );
  const byProvider: Record<string, string[]> = {};
  for (const crd of list.items) {
    const provider = crd.metadata.labels?.['cluster.x-k8s.io/provider'] ?? '(none)';
    byProvider[provider] = [...(byProvider[provider] ?? []), crd.metadata.name].sort();
  }
  return byProvider;
}

async function installedProviders(): Promise<string[]> {
  return Object.keys(await providerVersions()).sort();
}

async function tallyDeploymentExists(): Promise<boolean> {
  const apps = source.kubeConfig().makeApiClient(AppsV1Api);
  return exists(() =>
    apps.readNamespacedDeployment({ name: 'tally-ipam-controller-manager', namespace: 'tally-system' }),
  );
}

async function providerVersions(): Promise<Record<string, string>> {
  const list = ProviderList.parse(
    await source.kubeConfig().makeApiClient(CustomObjectsApi).listCustomObjectForAllNamespaces({
      group: 'clusterctl.cluster.x-k8s.io',
      version: 'v1alpha3',
      plural: 'providers',
    }),
  );
  return Object.fromEntries(list.items.map((provider) => [provider.metadata.name, provider.version]));
}

/** Both clusters as the move should leave them: `expected` claims on each, every ledger entry matching. */
async function settled(
  expected: Record<'source' | 'target', Record<string, string>>,
): Promise<Record<'source' | 'target', Inventory>> {
  return eventually(
    'each cluster to hold exactly the expected claims, each address once, each with one ledger entry',
    async () => {
      const [onSource, onTarget] = await Promise.all([inventory(source), inventory(target)]);
      if (JSON.stringify(addressesByClaim(onSource)) !== JSON.stringify(expected.source)) return undefined;
      if (JSON.stringify(addressesByClaim(onTarget)) !== JSON.stringify(expected.target)) return undefined;
      const mismatch = (await ledgerMismatch(source, onSource)) ?? (await ledgerMismatch(target, onTarget));
      if (mismatch) throw new Error(mismatch);
      progress(`source: ${describeCounts(onSource)}; target: ${describeCounts(onTarget)}`);
      return { source: onSource, target: onTarget };
    },
    {
      hint: `${source.logsHint()}; ${target.logsHint()}`,
      describe: async () => JSON.stringify({ source: await inventory(source), target: await inventory(target) }),
    },
  );
}

async function move(from: ManagementCluster, to: ManagementCluster): Promise<number> {
  const run = expectSuccess(
    await clusterctl.run([
      'move',
      '--kubeconfig',
      from.plane.kubeconfigPath,
      '--to-kubeconfig',
      to.plane.kubeconfigPath,
      '--namespace',
      NAMESPACE,
    ]),
  );
  progress(`clusterctl move ${from.name} → ${to.name} took ${(run.durationMs / 1000).toFixed(1)} s`);
  return run.durationMs;
}

describe('a management cluster with a fleet of both APIs, through clusterctl', () => {
  it('upgrade from the previous release to this tree keeps every allocation: nothing re-allocated, nothing released', async () => {
    const kubeconfig = source.plane.kubeconfigPath;
    await populateFleet(source);
    const before = await fleetReady(source);
    progress(`on ${previous.version}: ${describeCounts(before)}`);
    expect(await providerVersions()).toMatchObject({
      'ipam-tally': `v${previous.version}`,
      'infrastructure-sim': `v${previous.version}`,
    });

    const plan = expectSuccess(await clusterctl.run(['upgrade', 'plan', '--kubeconfig', kubeconfig]));
    expect(plan.output).toMatch(
      new RegExp(`ipam-tally\\s+tally-system\\s+IPAMProvider\\s+v${previous.version}\\s+v${NEXT_VERSION}`),
    );
    const applied = expectSuccess(
      await clusterctl.run([
        'upgrade',
        'apply',
        '--kubeconfig',
        kubeconfig,
        '--ipam',
        `tally-system/tally:v${NEXT_VERSION}`,
        '--infrastructure',
        `sim-system/sim:v${NEXT_VERSION}`,
      ]),
    );
    progress(`clusterctl upgrade apply took ${(applied.durationMs / 1000).toFixed(1)} s`);
    // The release notes' step for Metal3 users: the new asset, server-side (it fixes the CRDs' labels).
    await installCRDs(source.kubeConfig(), writeStandaloneAssets(join(work, 'assets')));
    // The Deployments' rollout: each new replica started beside the old one, which then stops.
    await source.replaceApp('ipam', { mainJs: APPS.ipam.mainJs });
    await source.replaceApp('sim', { mainJs: APPS.sim.mainJs });
    expect(await providerVersions()).toMatchObject({
      'ipam-tally': `v${NEXT_VERSION}`,
      'infrastructure-sim': `v${NEXT_VERSION}`,
    });

    // The new controller has seen everything (a claim made now is served), and nothing it found changed: the same
    // IPAddress objects (uids) at the same addresses, the same ledger entries (claim uids, heldSince), none released.
    const client = new Client(source.kubeConfig(), { fieldManager: 'tally-lifecycle' });
    onTestFinished(() => client.close());
    await client.create(CLAIM_RESOURCE, {
      apiVersion: `${IPAM_GROUP}/v1beta2`,
      kind: 'IPAddressClaim',
      metadata: { name: 'after-upgrade', namespace: NAMESPACE },
      spec: { poolRef: { apiGroup: IPAM_GROUP, kind: 'TallyIPPool', name: 'nodes' } },
    });
    const after = await eventually(
      'the claim made after the upgrade bound, every earlier one as it was',
      async () => {
        const current = await inventory(source);
        if (current.holdings.length !== before.holdings.length + 1) return undefined;
        const mismatch = await ledgerMismatch(source, current);
        if (mismatch) throw new Error(mismatch);
        return current;
      },
      { hint: source.logsHint() },
    );
    const fresh = after.holdings.find((holding) => holding.claim === `${NAMESPACE}/after-upgrade`);
    expect(fresh).toBeDefined();
    expect(after.holdings.filter((holding) => holding !== fresh)).toEqual(before.holdings);
    expect(before.holdings.map((holding) => holding.address)).not.toContain(fresh?.address);
    expect(after.ledger.filter((entry) => entry.claim !== `${NAMESPACE}/after-upgrade`)).toEqual(before.ledger);
    expect(addressesByClaim(after)).toMatchObject(addressesByClaim(before));
    progress(`on ${NEXT_VERSION}: ${describeCounts(after)}`);

    // The Metal3 CRDs are Metal3's now, whatever the previous release labelled them.
    const crds = source.kubeConfig().makeApiClient(ApiextensionsV1Api);
    for (const name of ['ippools.ipam.metal3.io', 'ipclaims.ipam.metal3.io', 'ipaddresses.ipam.metal3.io']) {
      const crd = await crds.readCustomResourceDefinition({ name });
      expect(crd.metadata?.labels?.[PROVIDER_NAME_LABEL], name).toBe('ipam-metal3');
    }
    // And it releases: the fleet is as it was before the upgrade.
    await client.delete(CLAIM_RESOURCE, { namespace: NAMESPACE, name: 'after-upgrade' });
    fleet = await eventually(
      'the claim made after the upgrade released',
      async () => {
        const current = await inventory(source);
        return JSON.stringify(current.holdings) === JSON.stringify(before.holdings) ? current : undefined;
      },
      { hint: source.logsHint() },
    );
  });

  it("move to another management cluster and back keeps every address of the Cluster's tree; claims outside it stay", async () => {
    const before = fleet;
    const all = addressesByClaim(before);
    const inTree = Object.fromEntries(Object.entries(all).filter(([claim]) => !OUTSIDE_THE_TREE.includes(claim)));
    const outside = Object.fromEntries(Object.entries(all).filter(([claim]) => OUTSIDE_THE_TREE.includes(claim)));
    expect(Object.keys(inTree)).toHaveLength(9);
    expect(Object.keys(outside)).toHaveLength(3);
    expect(heldTwice([before])).toEqual([]);
    progress(`before the move, source: ${describeCounts(before)}`);

    const there = await move(source, target);
    const afterMove = await settled({ source: outside, target: inTree });
    expect(afterMove.target.clusters).toEqual([`${NAMESPACE}/${CLUSTER}`]);
    expect(afterMove.target.machines).toEqual([`${NAMESPACE}/m0`, `${NAMESPACE}/m1`]);
    expect(afterMove.target.pools).toEqual([
      'GlobalTallyIPPool fleet-v6',
      'GlobalTallyPrefixPool fleet-v6-prefixes',
      `IPPool ${NAMESPACE}/provisioning`,
      `TallyIPPool ${NAMESPACE}/nodes`,
      `TallyPrefixPool ${NAMESPACE}/pods`,
    ]);
    // Global pools are copied, never deleted from the source (clusterctl's rule for cluster-scoped objects); the
    // Metal3 pool of no Cluster stays with its claim.
    expect(afterMove.source.pools).toEqual([
      'GlobalTallyIPPool fleet-v6',
      'GlobalTallyPrefixPool fleet-v6-prefixes',
      `IPPool ${NAMESPACE}/static`,
    ]);
    expect(heldTwice([afterMove.source, afterMove.target])).toEqual([]);
    await expectMovedAwayEvent(source);

    const back = await move(target, source);
    const afterBack = await settled({ source: all, target: {} });
    expect(afterBack.source.clusters).toEqual([`${NAMESPACE}/${CLUSTER}`]);
    expect(afterBack.target.clusters).toEqual([]);
    expect(heldTwice([afterBack.source, afterBack.target])).toEqual([]);
    progress(
      `move there ${(there / 1000).toFixed(1)} s, back ${(back / 1000).toFixed(1)} s; before: ${JSON.stringify(all)}`,
    );
  });

  it("delete --ipam tally without --include-crd keeps everything and init again serves it unchanged; --include-crd is refused while Tally's objects exist, then takes only Tally's CRDs", async () => {
    const cluster = source;
    const kubeconfig = cluster.plane.kubeconfigPath;
    const before = await fleetReady(cluster);
    const crdsBefore = await crdsByProvider();
    progress(`before: ${describeCounts(before)}; CRDs by provider: ${JSON.stringify(crdsBefore)}`);
    expect(crdsBefore['ipam-metal3']).toEqual([
      'ipaddresses.ipam.metal3.io',
      'ipclaims.ipam.metal3.io',
      'ippools.ipam.metal3.io',
    ]);
    expect(await installedProviders()).toContain('ipam-tally');

    // The controller goes with its Deployment, as it would in a cluster.
    await cluster.stopApp('ipam');
    const kept = expectSuccess(await clusterctl.run(['delete', '--kubeconfig', kubeconfig, '--ipam', 'tally']));
    progress(`clusterctl delete --ipam tally took ${(kept.durationMs / 1000).toFixed(1)} s`);
    expect(await installedProviders()).not.toContain('ipam-tally');
    expect(await tallyDeploymentExists()).toBe(false);
    expect(await crdsByProvider()).toEqual(crdsBefore);
    const afterDelete = await inventory(cluster);
    expect(afterDelete).toEqual(before);

    // Installing again: the new controller finds every allocation where it was.
    expectSuccess(
      await clusterctl.run(
        ['init', '--kubeconfig', cluster.plane.kubeconfigPath, '--ipam', `tally:v${clusterctl.version}`],
        {
          TALLY_IPAM_ENABLE_METAL3: 'true',
        },
      ),
    );
    await cluster.startApp('ipam');
    const reinstalled = await eventually(
      'the reinstalled controller serving the same allocations',
      async () => {
        const current = await inventory(cluster);
        if (JSON.stringify(addressesByClaim(current)) !== JSON.stringify(addressesByClaim(before))) return undefined;
        const mismatch = await ledgerMismatch(cluster, current);
        if (mismatch) throw new Error(mismatch);
        return current;
      },
      { hint: cluster.logsHint() },
    );
    expect(reinstalled.holdings).toEqual(before.holdings);

    // --include-crd while Tally's objects exist: clusterctl refuses before it deletes anything.
    await cluster.stopApp('ipam');
    const refused = await clusterctl.run(['delete', '--kubeconfig', kubeconfig, '--ipam', 'tally', '--include-crd']);
    expect(refused.exitCode).not.toBe(0);
    expect(refused.output).toContain('found existing objects for provider CRDs "ipam-tally"');
    expect(await installedProviders()).toContain('ipam-tally');
    expect(await crdsByProvider()).toEqual(crdsBefore);
    expect(await inventory(cluster)).toEqual(reinstalled);

    // Retiring Tally as an operator would: the Cluster and the claims of Tally's pools go while it runs, then its
    // pools, then (it stopped) its ledgers, which still hold the entry of the Metal3 claim Metal3 is to serve again.
    await cluster.startApp('ipam');
    const client = new Client(cluster.kubeConfig(), { fieldManager: 'tally-lifecycle' });
    onTestFinished(() => client.close());
    await client.delete(CLUSTER_RESOURCE, { namespace: NAMESPACE, name: CLUSTER });
    await client.delete(CLAIM_RESOURCE, { namespace: NAMESPACE, name: 'standalone' });
    await client.delete(CLAIM_RESOURCE, { namespace: OTHER_NAMESPACE, name: 'bystander' });
    const metal3Only = await eventually(
      'only the Metal3 claim of no Cluster left holding an address',
      async () => {
        const current = await inventory(cluster);
        return current.holdings.length === 1 && current.holdings[0]?.claim === `${NAMESPACE}/static-claim`
          ? current
          : undefined;
      },
      { hint: cluster.logsHint() },
    );
    for (const pool of metal3Only.pools.filter((name) => !name.startsWith('IPPool '))) {
      const [kind = '', path = ''] = pool.split(' ');
      const [namespace, name] = path.includes('/') ? path.split('/') : [undefined, path];
      await client.delete(POOL_RESOURCES[kind as keyof typeof POOL_RESOURCES], {
        name: name ?? '',
        ...(namespace ? { namespace } : {}),
      });
    }
    await eventually(
      "Tally's pools gone",
      async () => ((await inventory(cluster)).pools.every((name) => name.startsWith('IPPool ')) ? true : undefined),
      { hint: cluster.logsHint() },
    );
    await cluster.stopApp('ipam');
    for (const ledger of (await client.list(LEDGER_RESOURCE)).items)
      await client.delete(LEDGER_RESOURCE, ledger.metadata);
    const gone = expectSuccess(
      await clusterctl.run(['delete', '--kubeconfig', kubeconfig, '--ipam', 'tally', '--include-crd']),
    );
    progress(`clusterctl delete --ipam tally --include-crd took ${(gone.durationMs / 1000).toFixed(1)} s`);
    const { 'ipam-tally': tallyCRDs, ...others } = crdsBefore;
    expect(tallyCRDs?.length).toBeGreaterThan(0);
    // A CRD goes once the API server has removed its objects (its cleanup finalizer): clusterctl does not wait for it.
    await eventually(
      "Tally's CRDs gone, every other provider's there",
      async () => JSON.stringify(await crdsByProvider()) === JSON.stringify(others),
      { hint: cluster.logsHint(), describe: async () => JSON.stringify(await crdsByProvider()) },
    );
    const after = await inventory(cluster);
    progress(`after --include-crd: ${describeCounts(after)}`);
    // Metal3's API keeps its pool, claim and the address it held; Sim's and Cluster API's CRDs are all there.
    expect(after.holdings).toEqual(metal3Only.holdings);
    expect(after.pools).toEqual([`IPPool ${NAMESPACE}/static`]);
    expect(after.claims).toEqual([`metal3 ${NAMESPACE}/static-claim`]);
    expect(after.ledger).toEqual([]);
  });
});

/** The source pool's Event names the claim that did not move. */
async function expectMovedAwayEvent(cluster: ManagementCluster): Promise<void> {
  const events = await cluster
    .kubeConfig()
    .makeApiClient(EventsV1Api)
    .listNamespacedEvent({ namespace: NAMESPACE, fieldSelector: 'regarding.kind=TallyIPPool,regarding.name=nodes' });
  expect(events.items.map((event) => [event.type, event.reason, event.note])).toEqual([
    [
      'Warning',
      POOL_MOVED_AWAY_REASON,
      expect.stringContaining('for claims that did not move with a Cluster (standalone)'),
    ],
  ]);
}
