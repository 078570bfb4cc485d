import { describe, expect, it } from 'vitest';
import { readCapvManifests } from '../src/capv-manifests.js';
import { CAPV_RELEASES, type CapvRelease, capvVersionFor } from '../src/versions.js';

/**
 * v1.13's rule on each CAPV release, from its own module: the contract its metadata.yaml names for the release
 * series is the one its CRDs declare (`readCapvManifests` refuses a release where they disagree), and the pairing
 * with the Cluster API releases testenv runs.
 */
describe.each((Object.values(CAPV_RELEASES) as CapvRelease[]).map((release) => [release.version, release] as const))(
  'CAPV %s',
  (version, release) => {
    it("metadata.yaml's contract is the one its CRDs declare; the CRDs that serve two versions convert", async () => {
      const manifests = await readCapvManifests(version);
      expect(manifests.contract).toBe(release.contract);
      expect(manifests.crds).toHaveLength(8);
      for (const crd of manifests.crds) {
        const labels = (crd.object.metadata as { labels: Record<string, string> }).labels;
        expect(labels[`cluster.x-k8s.io/${release.contract}`], crd.name).toBe(release.contract);
        expect(crd.servedVersions, crd.name).toContain(release.storageVersion);
      }
      const multiVersion = manifests.crds.filter((crd) => crd.servedVersions.length > 1).map((crd) => crd.name);
      // VSphereClusterIdentity serves both versions without a conversion patch upstream (both are identical).
      expect(manifests.conversions.map((c) => c.crdName).sort()).toEqual(
        multiVersion.filter((name) => !name.startsWith('vsphereclusteridentities.')).sort(),
      );
    });

    it(`runs against Cluster API ${release.clusterApi}`, () => {
      expect(capvVersionFor(release.clusterApi)).toBe(version);
    });
  },
);

describe('pairing', () => {
  it('a Cluster API release without a CAPV release is an error, never a fallback', () => {
    expect(() => capvVersionFor('v1.13.6')).toThrow(/not a release testenv builds/);
  });
});
