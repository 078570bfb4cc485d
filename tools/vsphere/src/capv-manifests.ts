import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import {
  contractLabelProblems,
  downloadGoModule,
  installCRDs,
  parseWebhookConfigurations,
  type ShippedWebhookConfiguration,
  type WebhookEndpoint,
} from '@tally-ipam/testenv';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { z } from 'zod';
import { CAPV_MODULE, capvRelease } from './versions.js';

/**
 * CAPV's CRDs and webhook configurations, read from the release's own `config/` in the Go module cache, with exactly
 * what its kustomizations add that matters outside a cluster: `config/default/crd`'s `commonLabels` (the contract
 * label Cluster API reads to know which contract the kinds follow), its conversion patches (`patches/webhook_in_*`:
 * the CRDs that serve more than one version convert through CAPV's `/convert`, which `startCapv` points at its
 * manager on loopback) and `config/default`'s `namePrefix` (the configurations' names, which are generic without it).
 * The cert-manager patches do not apply here. The labels are checked against the release's `metadata.yaml` (v1.13's
 * rule: the contract of the release series is the one the CRDs declare).
 */

/** The govmomi-mode CRDs (`infrastructure.cluster.x-k8s.io`); the supervisor-mode ones stay out, so CAPV runs govmomi. */
const CRD_BASES = 'config/default/crd/bases';
const CRD_KUSTOMIZATION = 'config/default/crd/kustomization.yaml';
const DEFAULT_KUSTOMIZATION = 'config/default/kustomization.yaml';
const WEBHOOK_MANIFESTS = 'config/govmomi/webhook/manifests.yaml';
/** The path of the conversion webhook in every `webhook_in_*` patch (controller-runtime's). */
const CONVERSION_PATH = '/convert';

const Kustomization = z.looseObject({
  commonLabels: z.record(z.string(), z.string()).optional(),
  namePrefix: z.string().optional(),
  patches: z.array(z.looseObject({ path: z.string() })).optional(),
});

const CrdDocument = z.looseObject({
  kind: z.literal('CustomResourceDefinition'),
  metadata: z.looseObject({ name: z.string(), labels: z.record(z.string(), z.string()).optional() }),
  spec: z.looseObject({ versions: z.array(z.looseObject({ name: z.string(), served: z.boolean() })) }),
});

const ConversionPatch = z.looseObject({
  metadata: z.looseObject({ name: z.string() }),
  spec: z.looseObject({
    conversion: z.looseObject({
      strategy: z.literal('Webhook'),
      webhook: z.looseObject({
        conversionReviewVersions: z.array(z.string()).min(1),
        clientConfig: z.looseObject({ service: z.looseObject({ path: z.literal(CONVERSION_PATH) }) }),
      }),
    }),
  }),
});

export interface CapvManifests {
  /** The module's directory in the Go module cache. */
  readonly moduleDir: string;
  /** The CRDs, labelled: name (e.g. `vspheremachines.infrastructure.cluster.x-k8s.io`), the object, its served versions. */
  readonly crds: readonly CapvCrd[];
  /**
   * The CRDs the release converts through its webhook (its `webhook_in_*` patches, for CRDs serving more than one
   * version), with the review versions the patch names. Empty for a release whose CRDs each serve one version.
   */
  readonly conversions: readonly { readonly crdName: string; readonly conversionReviewVersions: readonly string[] }[];
  /** The contract of the release series in its `metadata.yaml`, which the CRDs' labels agree with (checked). */
  readonly contract: string;
  /** The labels every CRD gets (the contract label). */
  readonly crdLabels: Readonly<Record<string, string>>;
  /** The admission webhook configurations as shipped, and the name each is registered under. */
  readonly webhooks: readonly { readonly configuration: ShippedWebhookConfiguration; readonly name: string }[];
}

export interface CapvCrd {
  readonly name: string;
  readonly object: Record<string, unknown>;
  readonly servedVersions: readonly string[];
}

async function kustomization(moduleDir: string, path: string): Promise<z.infer<typeof Kustomization>> {
  return Kustomization.parse(parse(await readFile(join(moduleDir, path), 'utf8')));
}

/** The CRD documents of the release's `config/default/crd/bases`, labelled as its kustomization labels them. */
async function labelledCRDs(moduleDir: string, labels: Readonly<Record<string, string>>): Promise<CapvCrd[]> {
  const files = (await readdir(join(moduleDir, CRD_BASES))).filter((file) => file.endsWith('.yaml')).sort();
  const crds: CapvCrd[] = [];
  for (const file of files) {
    for (const document of parseAllDocuments(await readFile(join(moduleDir, CRD_BASES, file), 'utf8'))) {
      const value: unknown = document.toJS();
      if (value === null || value === undefined) continue;
      const crd = CrdDocument.parse(value);
      crd.metadata.labels = { ...crd.metadata.labels, ...labels };
      const servedVersions = crd.spec.versions.filter((v) => v.served).map((v) => v.name);
      crds.push({ name: crd.metadata.name, object: crd, servedVersions });
    }
  }
  return crds;
}

/** The conversion patches `config/default/crd/kustomization.yaml` applies (`patches/webhook_in_*.yaml`). */
async function conversionPatches(
  moduleDir: string,
  patches: readonly { path: string }[],
): Promise<Map<string, readonly string[]>> {
  const conversions = new Map<string, readonly string[]>();
  for (const { path } of patches) {
    if (!/(^|\/)webhook_in_[^/]+\.yaml$/.test(path)) continue;
    const file = join(moduleDir, 'config/default/crd', path);
    const parsed = ConversionPatch.safeParse(parse(await readFile(file, 'utf8')));
    if (!parsed.success) throw new Error(`${file} is not a CRD conversion patch: ${z.prettifyError(parsed.error)}`);
    conversions.set(parsed.data.metadata.name, parsed.data.spec.conversion.webhook.conversionReviewVersions);
  }
  return conversions;
}

/** Reads the release's manifests from the module cache (downloading the module if needed). */
export async function readCapvManifests(version: string): Promise<CapvManifests> {
  const release = capvRelease(version);
  const moduleDir = await downloadGoModule(CAPV_MODULE, release.version);
  const [crdKustomization, defaultKustomization, metadata] = await Promise.all([
    kustomization(moduleDir, CRD_KUSTOMIZATION),
    kustomization(moduleDir, DEFAULT_KUSTOMIZATION),
    readFile(join(moduleDir, 'metadata.yaml'), 'utf8'),
  ]);
  const crdLabels = crdKustomization.commonLabels ?? {};
  const crds = await labelledCRDs(moduleDir, crdLabels);
  const problems = contractLabelProblems(
    metadata,
    release.version,
    crds.map((crd) => crd.object),
  );
  if (problems.length > 0) {
    throw new Error(`CAPV ${version}: metadata.yaml and the CRDs' contract labels disagree: ${problems.join('; ')}`);
  }
  const patches = await conversionPatches(moduleDir, crdKustomization.patches ?? []);
  const conversions: { crdName: string; conversionReviewVersions: readonly string[] }[] = [];
  for (const crd of crds) {
    const reviewVersions = patches.get(crd.name);
    // A patch on a CRD that serves one version changes nothing: no request ever needs converting.
    if (crd.servedVersions.length > 1 && reviewVersions) {
      conversions.push({ crdName: crd.name, conversionReviewVersions: reviewVersions });
    }
  }
  const prefix = defaultKustomization.namePrefix ?? '';
  const shipped = parseWebhookConfigurations(
    await readFile(join(moduleDir, WEBHOOK_MANIFESTS), 'utf8'),
    `${CAPV_MODULE}@${version}/${WEBHOOK_MANIFESTS}`,
  );
  return {
    moduleDir,
    crds,
    conversions,
    contract: release.contract,
    crdLabels,
    webhooks: shipped.map((configuration) => ({ configuration, name: `${prefix}${configuration.name}` })),
  };
}

export interface InstallCapvCRDsOptions {
  /**
   * CAPV's webhook server on this machine: the CRDs of `conversions` then convert through its `/convert` (a loopback
   * `url` with the CA). Without it they keep conversion strategy `None`, as their bases ship (what `startCapv` installs
   * before its manager runs, and puts back when it stops).
   */
  readonly conversion?: WebhookEndpoint;
}

/** The CRD as applied: labelled, and with webhook conversion to `endpoint` when the release converts it. */
export function capvCrdManifest(
  manifests: CapvManifests,
  crd: CapvCrd,
  endpoint: WebhookEndpoint | undefined,
): Record<string, unknown> {
  const conversion = manifests.conversions.find((c) => c.crdName === crd.name);
  if (!endpoint || !conversion) return crd.object;
  const spec = crd.object.spec as Record<string, unknown>;
  return {
    ...crd.object,
    spec: {
      ...spec,
      conversion: {
        strategy: 'Webhook',
        webhook: {
          conversionReviewVersions: conversion.conversionReviewVersions,
          clientConfig: {
            url: `https://127.0.0.1:${endpoint.port}${CONVERSION_PATH}`,
            caBundle: Buffer.from(endpoint.caPem, 'utf8').toString('base64'),
          },
        },
      },
    },
  };
}

/**
 * Installs the release's CRDs, labelled (testenv's `installCRDs`: server-side apply, waits until they are served);
 * with `options.conversion`, those the release converts convert through that webhook server.
 */
export async function installCapvCRDs(
  kc: KubeConfig,
  version: string,
  options: InstallCapvCRDsOptions = {},
): Promise<CapvManifests> {
  const manifests = await readCapvManifests(version);
  const dir = await mkdtemp(join(tmpdir(), 'tally-capv-crds-'));
  try {
    await Promise.all(
      manifests.crds.map((crd) =>
        writeFile(join(dir, `${crd.name}.yaml`), stringify(capvCrdManifest(manifests, crd, options.conversion))),
      ),
    );
    await installCRDs(kc, [dir]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return manifests;
}
