import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { appsVersion, buildImages, IMAGE_REGISTRY, RELEASED_PROVIDERS } from '../src/artifacts.js';
import { run } from '../src/workspace.js';

const ArchiveManifest = z.array(
  z.object({ Config: z.string(), RepoTags: z.array(z.string()), Layers: z.array(z.string()) }),
);
const Descriptor = z.object({
  digest: z.string().regex(/^sha256:[0-9a-f]{64}$/),
  annotations: z.record(z.string(), z.string()).optional(),
});
const OciIndex = z.object({ manifests: z.array(Descriptor) });
const OciManifest = z.object({ config: Descriptor, layers: z.array(Descriptor) });

const version = appsVersion();
const work = mkdtempSync(join(tmpdir(), 'tally-release-images-'));
let archives: string[] = [];

beforeAll(() => {
  // The release's image half as `artifacts` runs it: tools/ship's build.sh and its Node image writer, no Docker.
  archives = buildImages(work, version);
}, 900_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

function blob(layout: string, digest: string): string {
  return join(layout, 'blobs', 'sha256', digest.replace(/^sha256:/, ''));
}

it('writes each image into its own directory: images/<image>/<image>.tar', () => {
  expect(archives).toEqual(
    RELEASED_PROVIDERS.map((provider) => join(work, 'images', provider.image, `${provider.image}.tar`)),
  );
});

for (const provider of RELEASED_PROVIDERS) {
  const ref = `${IMAGE_REGISTRY}/${provider.image}:v${version}`;
  const dir = join(work, 'images', provider.image);

  it(`${provider.image}: the docker-archive and the OCI layout are both the image tagged ${ref}`, () => {
    const manifest = ArchiveManifest.parse(
      JSON.parse(run('tar', ['-xOf', join(dir, `${provider.image}.tar`), 'manifest.json'], work)),
    );
    expect(manifest.map((image) => image.RepoTags)).toEqual([[ref]]);

    const layout = join(dir, 'oci');
    const index = OciIndex.parse(JSON.parse(readFileSync(join(layout, 'index.json'), 'utf8')));
    expect(index.manifests.map((entry) => entry.annotations?.['io.containerd.image.name'])).toEqual([ref]);
    const manifestDigest = index.manifests[0]?.digest ?? '';
    const ociManifest = OciManifest.parse(JSON.parse(readFileSync(blob(layout, manifestDigest), 'utf8')));
    // The layout holds the same image as the archive: the archive names its config by the config's digest.
    expect(manifest[0]?.Config).toBe(`${ociManifest.config.digest.replace(/^sha256:/, '')}.json`);
    for (const descriptor of [ociManifest.config, ...ociManifest.layers]) {
      expect(existsSync(blob(layout, descriptor.digest)), descriptor.digest).toBe(true);
    }
    expect(readFileSync(join(dir, 'inputs.sha256'), 'utf8')).toMatch(/^[0-9a-f]{64}\n$/);
  });
}

it('the two images differ (each directory holds its own app, not the last one built)', () => {
  const configs = RELEASED_PROVIDERS.map((provider) => {
    const archive = join(work, 'images', provider.image, `${provider.image}.tar`);
    return ArchiveManifest.parse(JSON.parse(run('tar', ['-xOf', archive, 'manifest.json'], work)))[0]?.Config;
  });
  expect(new Set(configs).size).toBe(RELEASED_PROVIDERS.length);
});
