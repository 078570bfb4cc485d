/**
 * A local clusterctl repository for what `clusterctl init` installs besides Tally's providers, built from the Cluster
 * API module of the run's release (testenv's `clusterApiVersion()`: `TALLY_CAPI_VERSION`, else its default; no
 * download): the core provider (`cluster-api`), the kubeadm bootstrap and control-plane
 * providers and cert-manager. They are stand-ins, and say so. The core provider holds what Cluster API's
 * core-components.yaml holds around its manager, rendered the way kustomize's `config/default` renders it: the
 * `capi-system` Namespace, the CRDs with their conversion webhook settings, the webhook Service
 * (`capi-system/capi-webhook-service`, port 443 to the manager's `webhook-server` port) and both webhook
 * configurations (`config/webhook/manifests.yaml` under their `capi-` names, each webhook naming that Service, with
 * cert-manager's CA injection annotation and no caBundle; `config/` is `core/config/` since v1.14). None of the providers has a Deployment (nothing on a
 * control plane without a kubelet could run one), nor RBAC or cert-manager's Issuer and Certificate; the bootstrap and
 * control-plane providers are their Namespace and CRDs; cert-manager is only its Issuer and Certificate CRDs, which is
 * what clusterctl's readiness probe for cert-manager creates. Where a kubelet runs the manager (the kind lane), the
 * core provider can be given as real components instead (`coreComponents`); the others stay stand-ins.
 */
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  CAPI_WEBHOOK_SERVICE,
  capiCoreConfigDir,
  capiModuleDir,
  clusterApiRelease,
  clusterApiVersion,
  DEFAULT_CLUSTER_API_VERSION,
  readCapiConversions,
  readCapiWebhookConfigurations,
} from '@tally-ipam/testenv';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { z } from 'zod';

/** The cert-manager version the stand-in claims: the default of that Cluster API release's clusterctl. */
export function certManagerStandInVersion(capiVersion?: string): string {
  return clusterApiRelease(clusterApiVersion(capiVersion)).certManager;
}

/** What the stand-in claims for the default Cluster API release (`certManagerStandInVersion` for another). */
export const CERT_MANAGER_STAND_IN_VERSION = clusterApiRelease(DEFAULT_CLUSTER_API_VERSION).certManager;

export interface StandInRepository {
  /** `providers:` entries (file:// URLs) and the `cert-manager:` setting for a clusterctl config. */
  readonly config: {
    providers: { name: string; type: string; url: string }[];
    'cert-manager': { url: string; version: string };
  };
  /** The `--core`, `--bootstrap`, `--control-plane` values for `clusterctl init`. */
  readonly initArgs: readonly string[];
}

function readObjects(dir: string): Record<string, unknown>[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith('.yaml'))
    .sort()
    .flatMap((name) =>
      parseAllDocuments(readFileSync(join(dir, name), 'utf8')).map((d) => d.toJS() as Record<string, unknown>),
    );
}

const KustomizationLabels = z.looseObject({
  labels: z.array(z.looseObject({ pairs: z.record(z.string(), z.string()) })).optional(),
  commonLabels: z.record(z.string(), z.string()).optional(),
});

/**
 * A provider's CRD bases labelled as its `config/crd/kustomization.yaml` labels them (`labels:` pairs, or
 * `commonLabels`): among them the `cluster.x-k8s.io/<contract>` labels, which must agree with metadata.yaml's contract
 * (v1.13's rule) and which Cluster API reads to know the contract the kinds follow.
 */
function labelledCRDs(crdDir: string): Record<string, unknown>[] {
  const kustomization = KustomizationLabels.parse(parse(readFileSync(join(crdDir, 'kustomization.yaml'), 'utf8')));
  const labels = Object.assign(
    {},
    kustomization.commonLabels,
    ...(kustomization.labels ?? []).map((entry) => entry.pairs),
  ) as Record<string, string>;
  return readObjects(join(crdDir, 'bases')).map((object) => {
    const metadata = (object.metadata ?? {}) as { labels?: Record<string, string> };
    return { ...object, metadata: { ...metadata, labels: { ...metadata.labels, ...labels } } };
  });
}

function namespace(name: string): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name } };
}

/** kustomize's `labels:` (with `includeSelectors`) of Cluster API's config/default. */
const CORE_LABELS = { 'cluster.x-k8s.io/provider': 'cluster-api' } as const;
/** What config/default's replacements put on the webhook configurations and CRDs (its Certificate `serving-cert`). */
const CORE_CA_INJECTION = { 'cert-manager.io/inject-ca-from': 'capi-system/capi-serving-cert' } as const;

/** config/webhook/service.yaml after config/default: ClusterIP (no type given), selecting the manager's Pods. */
function coreWebhookService(): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: CAPI_WEBHOOK_SERVICE.name, namespace: CAPI_WEBHOOK_SERVICE.namespace, labels: CORE_LABELS },
    spec: { ports: [{ port: 443, targetPort: 'webhook-server' }], selector: CORE_LABELS },
  };
}

/** config/webhook/manifests.yaml after config/default: `capi-` names, the Service's name and namespace, no caBundle. */
async function coreWebhookConfigurations(version: string): Promise<Record<string, unknown>[]> {
  return (await readCapiWebhookConfigurations(version)).map((configuration) => {
    const shipped = z.array(z.record(z.string(), z.unknown())).parse(configuration.manifest.webhooks);
    return {
      ...configuration.manifest,
      metadata: { name: configuration.name, labels: CORE_LABELS, annotations: CORE_CA_INJECTION },
      webhooks: shipped.map((webhook, index) => ({
        ...webhook,
        clientConfig: { service: { ...CAPI_WEBHOOK_SERVICE, path: configuration.webhooks[index]?.path } },
      })),
    };
  });
}

function writeComponents(
  dir: string,
  file: string,
  objects: readonly Record<string, unknown>[],
  metadata: string,
): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, file), objects.map((object) => `---\n${stringify(object, { lineWidth: 0 })}`).join(''));
  copyFileSync(metadata, join(dir, 'metadata.yaml'));
  return pathToFileURL(join(dir, file)).href;
}

function crd(group: string, kind: string, plural: string): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  };
}

export interface StandInRepositoryOptions {
  /**
   * The core provider's objects, written as its components instead of the stand-in (e.g. Cluster API core as its
   * release renders it, manager Deployment included, where a kubelet runs it); the kubeadm providers and cert-manager
   * stay stand-ins.
   */
  readonly coreComponents?: readonly Record<string, unknown>[];
  /**
   * The Cluster API release the repository serves (default: the run's, testenv's `clusterApiVersion()`); its
   * clusterctl must be the same release (`ensureClusterctl({ version })`).
   */
  readonly capiVersion?: string;
}

/** Writes the stand-in repository under `root`. */
export async function writeStandInRepository(
  root: string,
  options: StandInRepositoryOptions = {},
): Promise<StandInRepository> {
  const version = clusterApiVersion(options.capiVersion);
  const module = await capiModuleDir(version);
  const metadata = join(module, 'metadata.yaml');
  const conversions = new Map((await readCapiConversions(version)).map((c) => [c.crdName, c]));
  const coreCRDs = readObjects(join(await capiCoreConfigDir(version), 'crd', 'bases')).map((object) => {
    const name = (object.metadata as { name: string }).name;
    const conversion = conversions.get(name);
    if (!conversion) return object;
    // What config/crd/kustomization.yaml and config/default give these CRDs in Cluster API's own release.
    return {
      ...object,
      metadata: {
        ...(object.metadata as object),
        annotations: CORE_CA_INJECTION,
      },
      spec: {
        ...(object.spec as object),
        conversion: {
          strategy: 'Webhook',
          webhook: {
            conversionReviewVersions: conversion.conversionReviewVersions,
            clientConfig: {
              service: { ...CAPI_WEBHOOK_SERVICE, path: conversion.path },
            },
          },
        },
      },
    };
  });
  const core = writeComponents(
    join(root, 'cluster-api', version),
    'core-components.yaml',
    // kustomize's order: Namespace, CRDs, Service, then the webhook configurations (clusterctl applies in file order).
    options.coreComponents ?? [
      namespace('capi-system'),
      ...coreCRDs,
      coreWebhookService(),
      ...(await coreWebhookConfigurations(version)),
    ],
    metadata,
  );
  const bootstrap = writeComponents(
    join(root, 'bootstrap-kubeadm', version),
    'bootstrap-components.yaml',
    [
      namespace('capi-kubeadm-bootstrap-system'),
      ...labelledCRDs(join(module, 'bootstrap', 'kubeadm', 'config', 'crd')),
    ],
    metadata,
  );
  const controlPlane = writeComponents(
    join(root, 'control-plane-kubeadm', version),
    'control-plane-components.yaml',
    [
      namespace('capi-kubeadm-control-plane-system'),
      ...labelledCRDs(join(module, 'controlplane', 'kubeadm', 'config', 'crd')),
    ],
    metadata,
  );
  const certManager = certManagerStandInVersion(version);
  const certManagerDir = join(root, 'cert-manager', certManager);
  mkdirSync(certManagerDir, { recursive: true });
  const certManagerFile = join(certManagerDir, 'cert-manager.yaml');
  writeFileSync(
    certManagerFile,
    [crd('cert-manager.io', 'Issuer', 'issuers'), crd('cert-manager.io', 'Certificate', 'certificates')]
      .map((object) => `---\n${stringify(object)}`)
      .join(''),
  );
  return {
    config: {
      providers: [
        { name: 'cluster-api', type: 'CoreProvider', url: core },
        { name: 'kubeadm', type: 'BootstrapProvider', url: bootstrap },
        { name: 'kubeadm', type: 'ControlPlaneProvider', url: controlPlane },
      ],
      'cert-manager': { url: pathToFileURL(certManagerFile).href, version: certManager },
    },
    initArgs: [
      '--core',
      `cluster-api:${version}`,
      '--bootstrap',
      `kubeadm:${version}`,
      '--control-plane',
      `kubeadm:${version}`,
    ],
  };
}
