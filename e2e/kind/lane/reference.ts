/**
 * The reference in-cluster IPAM provider in the lane (issue 32, item 4): its manager binary, the one
 * `@tally-ipam/vsphere` builds for the local run, as an image without a registry, so the CAPV scenario can run it as a
 * Deployment next to CAPV's Pod. The lane only builds and loads the image; the scenario installs and removes it.
 */
import { type BinaryImageArchive, ensureBinaryImageArchive } from '@tally-ipam/kind';
import { ensureReferenceIpam } from '@tally-ipam/vsphere';

/** What the lane built and loaded for the reference provider (plain data: it crosses vitest's `provide`). */
export interface LaneReferenceIpam {
  /** The module's release, e.g. `v1.1.0`. */
  readonly version: string;
  /** The tag of the loaded image: the manager at `/manager`, as its release Deployment runs it. */
  readonly image: string;
  /** Its pool CRDs as the module ships them (`config/crd/bases`). */
  readonly crdDir: string;
}

/** The reference provider's image from the cache, or built from the binary (itself from the cache or built). */
export async function buildReferenceImage(
  log: (line: string) => void,
): Promise<{ archive: BinaryImageArchive; reference: LaneReferenceIpam }> {
  const binary = await ensureReferenceIpam(log);
  const archive = await ensureBinaryImageArchive({
    cacheName: 'reference-ipam-image',
    what: `the reference IPAM provider's image ${binary.version}`,
    image: `tally-ipam/cluster-api-ipam-provider-in-cluster:${binary.key.slice(0, 12)}`,
    binaries: [{ name: 'manager', path: binary.path, key: binary.key }],
    entrypoint: ['/manager'],
    onProgress: log,
  });
  return { archive, reference: { version: binary.version, image: archive.image, crdDir: binary.crdDir } };
}
