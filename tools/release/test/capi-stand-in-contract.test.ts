import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLUSTER_API_RELEASES, contractLabelProblems } from '@tally-ipam/testenv';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { certManagerStandInVersion, writeStandInRepository } from '../src/capi-stand-in.js';

/**
 * v1.13's rule on the stand-in repository `clusterctl init` installs from, for every supported Cluster API release:
 * the contract each provider's metadata.yaml names for the release series is the one its CRDs declare with their
 * `cluster.x-k8s.io/<contract>` label. The kubeadm providers' CRDs carry the labels of their `config/crd`
 * kustomization, as the release renders them. The core provider defines the contract and labels no CRD: not checked.
 */

const work = mkdtempSync(join(tmpdir(), 'tally-stand-in-contract-'));

afterAll(() => {
  rmSync(work, { recursive: true, force: true });
});

function crdsOf(file: string): unknown[] {
  return parseAllDocuments(readFileSync(file, 'utf8'))
    .map((document) => document.toJS() as { kind?: unknown } | null)
    .filter((object) => object?.kind === 'CustomResourceDefinition');
}

describe.each(Object.keys(CLUSTER_API_RELEASES))('the stand-in repository of Cluster API %s', (capiVersion) => {
  it("each kubeadm provider's CRDs carry the contract label of its metadata.yaml", async () => {
    const standIn = await writeStandInRepository(join(work, capiVersion), { capiVersion });
    const providers = standIn.config.providers.filter((provider) => provider.type !== 'CoreProvider');
    expect(providers.map((provider) => provider.type).sort()).toEqual(['BootstrapProvider', 'ControlPlaneProvider']);
    for (const provider of providers) {
      const components = fileURLToPath(provider.url);
      const metadata = readFileSync(join(dirname(components), 'metadata.yaml'), 'utf8');
      const crds = crdsOf(components);
      expect(crds.length, provider.type).toBeGreaterThan(0);
      expect(contractLabelProblems(metadata, capiVersion, crds), provider.type).toEqual([]);
    }
    expect(standIn.initArgs).toContain(`cluster-api:${capiVersion}`);
    expect(standIn.config['cert-manager'].version).toBe(certManagerStandInVersion(capiVersion));
  });

  it('the check sees a CRD whose label disagrees', async () => {
    const standIn = await writeStandInRepository(join(work, `${capiVersion}-broken`), { capiVersion });
    const bootstrap = standIn.config.providers.find((provider) => provider.type === 'BootstrapProvider');
    const components = fileURLToPath(bootstrap?.url ?? '');
    const metadata = readFileSync(join(dirname(components), 'metadata.yaml'), 'utf8');
    const crds = crdsOf(components) as { metadata: { labels?: Record<string, string> } }[];
    for (const crd of crds) delete crd.metadata.labels?.['cluster.x-k8s.io/v1beta2'];
    expect(contractLabelProblems(metadata, capiVersion, crds)[0]).toMatch(
      /has no cluster\.x-k8s\.io\/v1beta2 label \(metadata\.yaml: v1\.\d+\.\d+ implements v1beta2\)/,
    );
  });
});
