import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiextensionsV1Api, AppsV1Api } from '@kubernetes/client-node';
import { Client } from '@tally-ipam/controller-kit/client';
import { POOL_RESOURCES } from '@tally-ipam/ipam-provider';
import { LEDGER_RESOURCE } from '@tally-ipam/ledger';
import { type BuiltRelease, buildRelease, writeMetal3CRDsAsset } from '@tally-ipam/release';
import { CLAIM_RESOURCE, CLUSTER_RESOURCE } from '@tally-ipam/sim-infra';
import { installCRDs } from '@tally-ipam/testenv';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { z } from 'zod';
import { APPS } from '../apps.js';
import { eventually } from '../harness.js';
import { type Clusterctl, expectSuccess, prepareClusterctl } from './clusterctl.js';
import { CLUSTER, fleetReady, inventory, ledgerMismatch, NAMESPACE, OTHER_NAMESPACE, populateFleet } from './fleet.js';
import { addressesByClaim, describeCounts, exists, type Inventory } from './inventory.js';
import { type ManagementCluster, startManagementCluster } from './management-cluster.js';
import {
  expectMoveThereAndBack,
  expectUpgradeKept,
  NEXT_VERSION,
  providerVersions,
  upgradeTallyProviders,
} from './steps.js';

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
  return Object.keys(await providerVersions(source.kubeConfig())).sort();
}

async function tallyDeploymentExists(): Promise<boolean> {
  const apps = source.kubeConfig().makeApiClient(AppsV1Api);
  return exists(() =>
    apps.readNamespacedDeployment({ name: 'tally-ipam-controller-manager', namespace: 'tally-system' }),
  );
}

describe('a management cluster with a fleet of both APIs, through clusterctl', () => {
  it('upgrade from the previous release to this tree keeps every allocation: nothing re-allocated, nothing released', async () => {
    await populateFleet(source);
    const before = await fleetReady(source);
    progress(`on ${previous.version}: ${describeCounts(before)}`);
    const applied = await upgradeTallyProviders(clusterctl, source, previous.version, NEXT_VERSION);
    progress(`clusterctl upgrade apply took ${(applied / 1000).toFixed(1)} s`);
    // The release notes' step for Metal3 users: the new asset, server-side (it fixes the CRDs' labels).
    await installCRDs(source.kubeConfig(), [writeMetal3CRDsAsset(join(work, 'assets'))]);
    // The Deployments' rollout: each new replica started beside the old one, which then stops.
    await source.replaceApp('ipam', { mainJs: APPS.ipam.mainJs });
    await source.replaceApp('sim', { mainJs: APPS.sim.mainJs });
    fleet = await expectUpgradeKept(source, before, progress);
  });

  it("move to another management cluster and back keeps every address of the Cluster's tree; claims outside it stay", async () => {
    await expectMoveThereAndBack(clusterctl, { source, target }, fleet, progress);
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
    // This tree's controller (clusterctl installed this tree's version): without mainJs the cluster would start the
    // previous release's process it was created with, whose ledgers of 256 addresses are not this tree's.
    await cluster.startApp('ipam', { mainJs: APPS.ipam.mainJs });
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
    await cluster.startApp('ipam', { mainJs: APPS.ipam.mainJs });
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
      {
        hint: cluster.logsHint(),
        // What still holds them: each remaining pool's Ready condition and every ledger entry.
        describe: async () => {
          const left = await inventory(cluster);
          const conditions: Record<string, unknown> = {};
          for (const pool of left.pools.filter((name) => !name.startsWith('IPPool '))) {
            const [kind = '', path = ''] = pool.split(' ');
            const [namespace, name] = path.includes('/') ? path.split('/') : [undefined, path];
            const read = await client.get(POOL_RESOURCES[kind as keyof typeof POOL_RESOURCES], {
              name: name ?? '',
              ...(namespace ? { namespace } : {}),
            });
            conditions[pool] = (read.status as { conditions?: unknown } | undefined)?.conditions;
          }
          return { pools: conditions, ledger: left.ledger };
        },
      },
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
