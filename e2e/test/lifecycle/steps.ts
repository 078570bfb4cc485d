/**
 * The lifecycle steps and their assertions, shared by the suite on testenv planes (`lifecycle.test.ts`) and the kind
 * lane's (`kind/test/lifecycle.test.ts`, controllers as Pods): what clusterctl is asked, and what every allocation
 * must look like afterwards. Each takes the clusters as `FleetCluster`s, so either kind of management cluster fits.
 */
import { ApiextensionsV1Api, CustomObjectsApi, EventsV1Api, type KubeConfig } from '@kubernetes/client-node';
import { IPAM_GROUP, PROVIDER_NAME_LABEL } from '@tally-ipam/api-types';
import { Client } from '@tally-ipam/controller-kit/client';
import { POOL_MOVED_AWAY_REASON } from '@tally-ipam/ipam-provider';
import { CLAIM_RESOURCE } from '@tally-ipam/sim-infra';
import { expect } from 'vitest';
import { z } from 'zod';
import { eventually } from '../harness.js';
import { type Clusterctl, expectSuccess } from './clusterctl.js';
import {
  CLUSTER,
  type FleetCluster,
  heldTwice,
  inventory,
  ledgerMismatch,
  NAMESPACE,
  OUTSIDE_THE_TREE,
} from './fleet.js';
import { addressesByClaim, describeCounts, type Inventory, type LedgerHolding } from './inventory.js';

export type Progress = (message: string) => void;

/**
 * This tree's providers as the upgrade installs them: published as the next minor release after the previous one
 * (`PREVIOUS_RELEASE`, 0.1.0; both apps carry the same version).
 */
export const NEXT_VERSION = '0.2.0';

const ProviderList = z.object({
  items: z.array(z.object({ metadata: z.object({ name: z.string() }), version: z.string() })),
});

/** clusterctl's inventory: provider label → installed version (`v0.2.0`). */
export async function providerVersions(kc: KubeConfig): Promise<Record<string, string>> {
  const list = ProviderList.parse(
    await kc.makeApiClient(CustomObjectsApi).listCustomObjectForAllNamespaces({
      group: 'clusterctl.cluster.x-k8s.io',
      version: 'v1alpha3',
      plural: 'providers',
    }),
  );
  return Object.fromEntries(list.items.map((provider) => [provider.metadata.name, provider.version]));
}

/**
 * `clusterctl upgrade plan` offers Tally `from` → `to`, then `upgrade apply` takes both of Tally's providers there.
 * Resolves with how long `apply` took (clusterctl's own steps: scale down, delete, install).
 */
export async function upgradeTallyProviders(
  clusterctl: Clusterctl,
  cluster: FleetCluster,
  from: string,
  to: string,
): Promise<number> {
  const kubeconfig = cluster.env.kubeconfigPath;
  expect(await providerVersions(cluster.kubeConfig())).toMatchObject({
    'ipam-tally': `v${from}`,
    'infrastructure-sim': `v${from}`,
  });
  const plan = expectSuccess(await clusterctl.run(['upgrade', 'plan', '--kubeconfig', kubeconfig]));
  expect(plan.output).toMatch(new RegExp(`ipam-tally\\s+tally-system\\s+IPAMProvider\\s+v${from}\\s+v${to}`));
  const applied = expectSuccess(
    await clusterctl.run([
      'upgrade',
      'apply',
      '--kubeconfig',
      kubeconfig,
      '--ipam',
      `tally-system/tally:v${to}`,
      '--infrastructure',
      `sim-system/sim:v${to}`,
    ]),
  );
  expect(await providerVersions(cluster.kubeConfig())).toMatchObject({
    'ipam-tally': `v${to}`,
    'infrastructure-sim': `v${to}`,
  });
  return applied.durationMs;
}

/**
 * After an upgrade: the new controller has seen everything (a claim made now is served, with an address no earlier
 * claim holds), and nothing it found changed — the same IPAddress objects (uids) at the same addresses, the same
 * ledger entries (claim uids, heldSince), none released; the Metal3 CRDs are Metal3's; the new claim is released
 * again. Resolves with the fleet as it was before the upgrade, read again.
 */
export async function expectUpgradeKept(
  cluster: FleetCluster,
  before: Inventory,
  progress: Progress,
): Promise<Inventory> {
  const client = new Client(cluster.kubeConfig(), { fieldManager: 'tally-lifecycle' });
  try {
    await client.create(CLAIM_RESOURCE, {
      apiVersion: `${IPAM_GROUP}/v1beta2`,
      kind: 'IPAddressClaim',
      metadata: { name: 'after-upgrade', namespace: NAMESPACE },
      spec: { poolRef: { apiGroup: IPAM_GROUP, kind: 'TallyIPPool', name: 'nodes' } },
    });
    const after = await eventually(
      'the claim made after the upgrade bound, every earlier one as it was',
      async () => {
        const current = await inventory(cluster);
        if (current.holdings.length !== before.holdings.length + 1) return undefined;
        const mismatch = await ledgerMismatch(cluster, current);
        if (mismatch) throw new Error(mismatch);
        return current;
      },
      { hint: cluster.logsHint() },
    );
    const fresh = after.holdings.find((holding) => holding.claim === `${NAMESPACE}/after-upgrade`);
    expect(fresh).toBeDefined();
    expect(after.holdings.filter((holding) => holding !== fresh)).toEqual(before.holdings);
    expect(before.holdings.map((holding) => holding.address)).not.toContain(fresh?.address);
    const kept = after.ledger.filter((entry) => entry.claim !== `${NAMESPACE}/after-upgrade`);
    if (before.ledger.every((entry) => entry.inLayout)) {
      expect(kept).toEqual(before.ledger);
    } else {
      // The release upgraded from kept ledgers of another block size (0.1.0's 256 addresses): the new one entered every
      // allocation anew in its own ledgers (heldSince is the re-entry's) and deleted the old ledgers once redundant.
      const held = (entries: readonly LedgerHolding[]) =>
        entries.map(({ address, claim, claimUid, claimKind, released }) => ({
          address,
          claim,
          claimUid,
          claimKind,
          released,
        }));
      expect(kept.every((entry) => entry.inLayout)).toBe(true);
      expect(held(kept)).toEqual(held(before.ledger));
    }
    expect(addressesByClaim(after)).toMatchObject(addressesByClaim(before));
    progress(`[${cluster.name}] after the upgrade: ${describeCounts(after)}`);

    // The Metal3 CRDs are Metal3's now, whatever the previous release labelled them.
    const crds = cluster.kubeConfig().makeApiClient(ApiextensionsV1Api);
    for (const name of ['ippools.ipam.metal3.io', 'ipclaims.ipam.metal3.io', 'ipaddresses.ipam.metal3.io']) {
      const crd = await crds.readCustomResourceDefinition({ name });
      expect(crd.metadata?.labels?.[PROVIDER_NAME_LABEL], name).toBe('ipam-metal3');
    }
    await client.delete(CLAIM_RESOURCE, { namespace: NAMESPACE, name: 'after-upgrade' });
    return await eventually(
      'the claim made after the upgrade released',
      async () => {
        const current = await inventory(cluster);
        return JSON.stringify(current.holdings) === JSON.stringify(before.holdings) ? current : undefined;
      },
      { hint: cluster.logsHint() },
    );
  } finally {
    client.close();
  }
}

/** Both clusters as a move should leave them: `expected` claims on each, every ledger entry matching. */
async function settled(
  clusters: Record<'source' | 'target', FleetCluster>,
  expected: Record<'source' | 'target', Record<string, string>>,
  progress: Progress,
): Promise<Record<'source' | 'target', Inventory>> {
  const { source, target } = clusters;
  return eventually(
    'each cluster to hold exactly the expected claims, each address once, each with one ledger entry',
    async () => {
      const [onSource, onTarget] = await Promise.all([inventory(source), inventory(target)]);
      if (JSON.stringify(addressesByClaim(onSource)) !== JSON.stringify(expected.source)) return undefined;
      if (JSON.stringify(addressesByClaim(onTarget)) !== JSON.stringify(expected.target)) return undefined;
      const mismatch = (await ledgerMismatch(source, onSource)) ?? (await ledgerMismatch(target, onTarget));
      if (mismatch) throw new Error(mismatch);
      progress(`${source.name}: ${describeCounts(onSource)}; ${target.name}: ${describeCounts(onTarget)}`);
      return { source: onSource, target: onTarget };
    },
    {
      hint: `${source.logsHint()}; ${target.logsHint()}`,
      describe: async () => JSON.stringify({ source: await inventory(source), target: await inventory(target) }),
    },
  );
}

async function move(clusterctl: Clusterctl, from: FleetCluster, to: FleetCluster, progress: Progress): Promise<number> {
  const run = expectSuccess(
    await clusterctl.run([
      'move',
      '--kubeconfig',
      from.env.kubeconfigPath,
      '--to-kubeconfig',
      to.env.kubeconfigPath,
      '--namespace',
      NAMESPACE,
    ]),
  );
  progress(`clusterctl move ${from.name} → ${to.name} took ${(run.durationMs / 1000).toFixed(1)} s`);
  return run.durationMs;
}

/** How long each clusterctl move took. */
export interface MoveTimes {
  readonly there: number;
  readonly back: number;
}

/**
 * `clusterctl move` of the fleet's namespace from `source` to `target` and back. After each: each side holds exactly
 * the expected claims at their addresses, each address once across both, one live ledger entry per allocation naming
 * a claim that exists there; the Cluster's tree moves, the three claims of no Cluster stay on the source, global
 * pools are copied (and stay), and the source's TallyIPPool carries the Event naming the claim left behind.
 */
export async function expectMoveThereAndBack(
  clusterctl: Clusterctl,
  clusters: Record<'source' | 'target', FleetCluster>,
  before: Inventory,
  progress: Progress,
): Promise<MoveTimes> {
  const { source, target } = clusters;
  const all = addressesByClaim(before);
  const inTree = Object.fromEntries(Object.entries(all).filter(([claim]) => !OUTSIDE_THE_TREE.includes(claim)));
  const outside = Object.fromEntries(Object.entries(all).filter(([claim]) => OUTSIDE_THE_TREE.includes(claim)));
  expect(Object.keys(inTree)).toHaveLength(9);
  expect(Object.keys(outside)).toHaveLength(3);
  expect(heldTwice([before])).toEqual([]);
  progress(`before the move, ${source.name}: ${describeCounts(before)}`);

  const there = await move(clusterctl, source, target, progress);
  const afterMove = await settled(clusters, { source: outside, target: inTree }, progress);
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

  const back = await move(clusterctl, target, source, progress);
  const afterBack = await settled(clusters, { source: all, target: {} }, progress);
  expect(afterBack.source.clusters).toEqual([`${NAMESPACE}/${CLUSTER}`]);
  expect(afterBack.target.clusters).toEqual([]);
  expect(heldTwice([afterBack.source, afterBack.target])).toEqual([]);
  progress(
    `move there ${(there / 1000).toFixed(1)} s, back ${(back / 1000).toFixed(1)} s; before: ${JSON.stringify(all)}`,
  );
  return { there, back };
}

/** The source pool's Event names the claim that did not move (its delete webhook saw `delete-for-move`). */
async function expectMovedAwayEvent(cluster: FleetCluster): Promise<void> {
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
