import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import {
  downloadGoModule,
  installCRDs,
  parseWebhookConfigurations,
  type ShippedWebhookConfiguration,
} from '@tally-ipam/testenv';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { z } from 'zod';
import { CAPV_MODULE, capvRelease } from './versions.js';

/**
 * CAPV's CRDs and webhook configurations, read from the release's own `config/` in the Go module cache, with exactly
 * what its kustomizations add that matters outside a cluster: `config/default/crd`'s `commonLabels` (the contract
 * label Cluster API reads to know which contract the kinds follow) and `config/default`'s `namePrefix` (the
 * configurations' names, which are generic without it). The conversion patches are not applied: every CRD serves one
 * version (checked below), so the API server never converts; the cert-manager patches do not apply here.
 */

/** The govmomi-mode CRDs (`infrastructure.cluster.x-k8s.io`); the supervisor-mode ones stay out, so CAPV runs govmomi. */
const CRD_BASES = 'config/default/crd/bases';
const CRD_KUSTOMIZATION = 'config/default/crd/kustomization.yaml';
const DEFAULT_KUSTOMIZATION = 'config/default/kustomization.yaml';
const WEBHOOK_MANIFESTS = 'config/govmomi/webhook/manifests.yaml';

const Kustomization = z.looseObject({
  commonLabels: z.record(z.string(), z.string()).optional(),
  namePrefix: z.string().optional(),
});

const CrdDocument = z.looseObject({
  kind: z.literal('CustomResourceDefinition'),
  metadata: z.looseObject({ name: z.string(), labels: z.record(z.string(), z.string()).optional() }),
  spec: z.looseObject({ versions: z.array(z.looseObject({ name: z.string(), served: z.boolean() })) }),
});

export interface CapvManifests {
  /** The module's directory in the Go module cache. */
  readonly moduleDir: string;
  /** The CRDs, labelled: name (e.g. `vspheremachines.infrastructure.cluster.x-k8s.io`) and the YAML to apply. */
  readonly crds: readonly { readonly name: string; readonly yaml: string }[];
  /** The labels every CRD gets (the contract label). */
  readonly crdLabels: Readonly<Record<string, string>>;
  /** The admission webhook configurations as shipped, and the name each is registered under. */
  readonly webhooks: readonly { readonly configuration: ShippedWebhookConfiguration; readonly name: string }[];
}

async function kustomization(moduleDir: string, path: string): Promise<z.infer<typeof Kustomization>> {
  return Kustomization.parse(parse(await readFile(join(moduleDir, path), 'utf8')));
}

/** The CRD documents of the release's `config/default/crd/bases`, labelled as its kustomization labels them. */
async function labelledCRDs(
  moduleDir: string,
  labels: Readonly<Record<string, string>>,
): Promise<{ name: string; yaml: string }[]> {
  const files = (await readdir(join(moduleDir, CRD_BASES))).filter((file) => file.endsWith('.yaml')).sort();
  const crds: { name: string; yaml: string }[] = [];
  for (const file of files) {
    for (const document of parseAllDocuments(await readFile(join(moduleDir, CRD_BASES, file), 'utf8'))) {
      const value: unknown = document.toJS();
      if (value === null || value === undefined) continue;
      const crd = CrdDocument.parse(value);
      const served = crd.spec.versions.filter((v) => v.served).map((v) => v.name);
      if (served.length !== 1) {
        // Then the API server would convert between versions, and CAPV's conversion webhook would be needed too.
        throw new Error(
          `${file}: ${crd.metadata.name} serves ${served.join(', ')}; only one served version is handled`,
        );
      }
      crd.metadata.labels = { ...crd.metadata.labels, ...labels };
      crds.push({ name: crd.metadata.name, yaml: stringify(crd) });
    }
  }
  return crds;
}

/** Reads the release's manifests from the module cache (downloading the module if needed). */
export async function readCapvManifests(version: string): Promise<CapvManifests> {
  const release = capvRelease(version);
  const moduleDir = await downloadGoModule(CAPV_MODULE, release.version);
  const [crdKustomization, defaultKustomization] = await Promise.all([
    kustomization(moduleDir, CRD_KUSTOMIZATION),
    kustomization(moduleDir, DEFAULT_KUSTOMIZATION),
  ]);
  const crdLabels = crdKustomization.commonLabels ?? {};
  if (
    crdLabels['cluster.x-k8s.io/v1beta1'] !== release.contract &&
    crdLabels['cluster.x-k8s.io/v1beta2'] !== release.contract
  ) {
    throw new Error(
      `${CRD_KUSTOMIZATION} of CAPV ${version} labels its CRDs ${JSON.stringify(crdLabels)}, not contract ${release.contract}`,
    );
  }
  const crds = await labelledCRDs(moduleDir, crdLabels);
  const prefix = defaultKustomization.namePrefix ?? '';
  const shipped = parseWebhookConfigurations(
    await readFile(join(moduleDir, WEBHOOK_MANIFESTS), 'utf8'),
    `${CAPV_MODULE}@${version}/${WEBHOOK_MANIFESTS}`,
  );
  return {
    moduleDir,
    crds,
    crdLabels,
    webhooks: shipped.map((configuration) => ({ configuration, name: `${prefix}${configuration.name}` })),
  };
}

/** Installs the release's CRDs, labelled (testenv's `installCRDs`: server-side apply, waits until they are served). */
export async function installCapvCRDs(kc: KubeConfig, version: string): Promise<CapvManifests> {
  const manifests = await readCapvManifests(version);
  const dir = await mkdtemp(join(tmpdir(), 'tally-capv-crds-'));
  try {
    await Promise.all(manifests.crds.map((crd) => writeFile(join(dir, `${crd.name}.yaml`), crd.yaml)));
    await installCRDs(kc, [dir]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return manifests;
}
