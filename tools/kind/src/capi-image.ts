import { ensureCapiManager } from '@tally-ipam/testenv';
import { type BinaryImageArchive, ensureBinaryImageArchive } from './binary-image.js';
import { capiManagerImage } from './versions.js';

export type CapiManagerImageArchive = BinaryImageArchive;

/**
 * The Cluster API core manager image of a release (default: the run's, testenv's `clusterApiVersion()`), from the
 * binary testenv builds for it, as an archive for `kind load image-archive`.
 */
export async function ensureCapiManagerImageArchive(
  onProgress: (message: string) => void = () => {},
  capiVersion?: string,
): Promise<CapiManagerImageArchive> {
  const manager = await ensureCapiManager({ version: capiVersion, onProgress });
  return ensureBinaryImageArchive({
    cacheName: 'capi-image',
    what: 'the Cluster API manager image',
    image: capiManagerImage(manager.version),
    binaries: [{ name: 'manager', path: manager.path, key: manager.key }],
    entrypoint: ['/manager'],
    onProgress,
  });
}
