import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import {
  CLUSTERCTL_LABEL,
  CLUSTERCTL_MOVE_HIERARCHY_LABEL,
  CONTRACT_LABEL_PREFIX,
  PROVIDER_NAME_LABEL,
} from '@tally-ipam/api-types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { z } from 'zod';
import { appsVersion, RELEASED_PROVIDERS, writeClusterctlRepository, writeStandaloneAssets } from '../src/artifacts.js';
import { REPOSITORY_ROOT } from '../src/workspace.js';

/**
 * Every CRD a release ships, read against what clusterctl (v1.12) does with labels, so that `move`, `delete` and
 * `upgrade` keep every object:
 * - `move` discovers the kinds to move only from CRDs labelled `clusterctl.cluster.x-k8s.io`; `clusterctl init` adds
 *   that label to everything it installs, but a CRD applied with kubectl (the Metal3 asset) must carry it itself;
 * - `move` then moves an object only when it is linked to a Cluster through owner references, or its CRD (or the
 *   object) carries `clusterctl.cluster.x-k8s.io/move` or `…/move-hierarchy`;
 * - `delete --include-crd` deletes the CRDs labelled `cluster.x-k8s.io/provider=<the provider>` (and every object of
 *   them): a CRD must name the provider that owns its API, never another;
 * - since v1.13, a provider's CRDs carry `cluster.x-k8s.io/<contract>` for the contract its metadata.yaml names.
 */

const CRD = z.object({
  kind: z.literal('CustomResourceDefinition'),
  metadata: z.object({ name: z.string(), labels: z.record(z.string(), z.string()).optional() }),
  spec: z.object({
    group: z.string(),
    scope: z.enum(['Namespaced', 'Cluster']),
    names: z.object({ kind: z.string() }),
    versions: z.array(z.object({ name: z.string(), storage: z.boolean() })),
  }),
});
type CRD = z.infer<typeof CRD>;

const Metadata = z.object({
  releaseSeries: z.array(z.object({ major: z.number(), minor: z.number(), contract: z.string() })),
});

/**
 * How the objects of every kind Tally's release ships get to the target of a move. `owner chain`: each object is
 * owned (directly or through others) by a Cluster, Machine or MachinePool, which clusterctl moves; `hierarchy`: the
 * CRD's move-hierarchy label moves every object with what it owns (pools serve claims of many Clusters, or none);
 * `stays`: not moved on purpose.
 */
const HOW_KINDS_MOVE: Readonly<Record<string, 'owner chain' | 'hierarchy' | 'stays'>> = {
  TallyIPPool: 'hierarchy',
  GlobalTallyIPPool: 'hierarchy',
  TallyPrefixPool: 'hierarchy',
  GlobalTallyPrefixPool: 'hierarchy',
  // Ledgers name claims by uid, which a move changes: the target enters the moved IPAddresses into its own.
  TallyAddressLedger: 'stays',
  SimCluster: 'owner chain',
  SimClusterTemplate: 'owner chain',
  SimMachine: 'owner chain',
  SimMachineTemplate: 'owner chain',
  SimMachinePool: 'owner chain',
  SimMachinePoolTemplate: 'owner chain',
  // As in Metal3: IPPools are owned by their Cluster, IPClaims by what claims, IPAddresses by both.
  IPPool: 'owner chain',
  IPClaim: 'owner chain',
  IPAddress: 'owner chain',
};

const work = mkdtempSync(join(tmpdir(), 'tally-crd-labels-'));
let components: Record<string, CRD[]> = {};
let metal3Asset: CRD[] = [];

function crdsOf(text: string): CRD[] {
  return parseAllDocuments(text)
    .map((document) => document.toJS() as { kind?: unknown } | null)
    .filter((object) => object?.kind === 'CustomResourceDefinition')
    .map((object) => CRD.parse(object));
}

beforeAll(() => {
  const repository = writeClusterctlRepository(join(work, 'clusterctl'), appsVersion());
  components = Object.fromEntries(
    Object.entries(repository.componentsPaths).map(([label, path]) => [label, crdsOf(readFileSync(path, 'utf8'))]),
  );
  const asset = writeStandaloneAssets(join(work, 'assets')).find((path) => basename(path) === 'metal3-crds.yaml');
  metal3Asset = crdsOf(readFileSync(asset ?? '', 'utf8'));
});

afterAll(() => {
  rmSync(work, { recursive: true, force: true });
});

const labels = (crd: CRD): Record<string, string> => crd.metadata.labels ?? {};

describe("every shipped CRD's labels, read against clusterctl's rules", () => {
  it("each CRD of a provider's components names that provider, and carries the contract label of its metadata.yaml", () => {
    for (const provider of RELEASED_PROVIDERS) {
      const crds = components[provider.label] ?? [];
      expect(crds.length, provider.label).toBeGreaterThan(0);
      const metadata = Metadata.parse(
        parse(readFileSync(join(REPOSITORY_ROOT, provider.app, 'metadata.yaml'), 'utf8')),
      );
      const [major, minor] = appsVersion().split('.').map(Number);
      const series = metadata.releaseSeries.find((entry) => entry.major === major && entry.minor === minor);
      expect(series, `${provider.app}/metadata.yaml has the release series of ${appsVersion()}`).toBeDefined();
      for (const crd of crds) {
        expect(labels(crd)[PROVIDER_NAME_LABEL], crd.metadata.name).toBe(provider.label);
        // Kinds Cluster API resolves through the contract label: the pools an IPAddressClaim names, Sim's kinds.
        if (HOW_KINDS_MOVE[crd.spec.names.kind] === 'stays') continue;
        const storage = crd.spec.versions.find((version) => version.storage)?.name;
        expect(labels(crd)[`${CONTRACT_LABEL_PREFIX}${series?.contract}`], crd.metadata.name).toBe(storage);
      }
    }
  });

  it('every kind is moved the way HOW_KINDS_MOVE says, by the labels clusterctl reads', () => {
    const all = [...Object.values(components).flat(), ...metal3Asset];
    expect(all.map((crd) => crd.spec.names.kind).sort()).toEqual(Object.keys(HOW_KINDS_MOVE).sort());
    for (const crd of all) {
      const hierarchy = labels(crd)[CLUSTERCTL_MOVE_HIERARCHY_LABEL] !== undefined;
      expect(hierarchy, crd.metadata.name).toBe(HOW_KINDS_MOVE[crd.spec.names.kind] === 'hierarchy');
      expect(labels(crd)['clusterctl.cluster.x-k8s.io/move'], crd.metadata.name).toBeUndefined();
    }
  });

  it("the Metal3 asset, applied with kubectl, is discoverable by clusterctl move and owned by Metal3's provider, never Tally's", () => {
    expect(metal3Asset.map((crd) => crd.metadata.name).sort()).toEqual([
      'ipaddresses.ipam.metal3.io',
      'ipclaims.ipam.metal3.io',
      'ippools.ipam.metal3.io',
    ]);
    for (const crd of metal3Asset) {
      expect(labels(crd)[CLUSTERCTL_LABEL], crd.metadata.name).toBe('');
      expect(labels(crd)[PROVIDER_NAME_LABEL], crd.metadata.name).toBe('ipam-metal3');
    }
  });

  it('no CRD is shipped twice', () => {
    const names = [...Object.values(components).flat(), ...metal3Asset].map((crd) => crd.metadata.name);
    expect(new Set(names).size).toBe(names.length);
  });
});
