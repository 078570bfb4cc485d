/**
 * The shipping checks every app passes, as vitest suites: the components file and its wiring
 * (`describeComponents`), the same objects on a real API server (`describeAppliedComponents`), and the controller
 * image run as its Deployment would run it (`describeImageRun`). Each app adds what only it knows (its object list,
 * its webhook configuration, its access reviews, its core path).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ApisApi,
  AuthorizationV1Api,
  CoreV1Api,
  KubeConfig,
  type V1PolicyRule,
  type V1ResourceAttributes,
  type V1ValidatingWebhookConfiguration,
} from '@kubernetes/client-node';
import { asKubeApiError, Client, type ResourceKind } from '@tally-ipam/controller-kit/client';
import {
  DEFAULT_WEBHOOK_CERT_DIR,
  type ServiceClientMode,
  type UrlClientMode,
} from '@tally-ipam/controller-kit/webhook';
import {
  type ControlPlane,
  type ControlPlaneOptions,
  createServingCertDir,
  startControlPlane,
} from '@tally-ipam/testenv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  CERT_MANAGER_API_VERSION,
  discover,
  freeLoopbackPort,
  type ImageController,
  ImageControllerExitedError,
  RBAC_KINDS,
  resourceKindOf,
  seedContainerTmp,
  serviceAccountKubeconfig,
  startImageController,
} from './cluster.js';
import { defaultManifests, renderComponents } from './components.js';
import {
  buildImage,
  defaultImageRef,
  IMAGE_ENTRYPOINT,
  IMAGE_FILES,
  IMAGE_USER,
  imageFilesBesidesLibraries,
  readProcessSecurity,
  type UnpackedImage,
  unpackImage,
} from './image.js';
import { at, buildKustomization, CLUSTER_SCOPED_KINDS, type Manifest, only, parseManifests } from './kustomize.js';
import { PROVIDER_LABEL, type ShippedProvider } from './provider.js';
import { findVariables, substituteVariables } from './variables.js';

/** The names the config's objects refer to each other by, read from config/default (not assumed). */
export interface ProviderWiring {
  readonly namespace: string;
  readonly serviceAccount: string;
  readonly deployment: Manifest;
  readonly webhookService: Manifest;
  readonly certificate: Manifest;
}

/** Finds the Deployment, its ServiceAccount, the webhook Service and the Certificate in config/default. */
export function providerWiring(provider: ShippedProvider): ProviderWiring {
  const manifests = defaultManifests(provider);
  const namespace = only(manifests, 'Namespace').metadata.name;
  const deployment = only(manifests, 'Deployment');
  const serviceAccount = only(manifests, 'ServiceAccount').metadata.name;
  const webhook = only(manifests, 'ValidatingWebhookConfiguration');
  const serviceName = at(webhook, 'webhooks', 0, 'clientConfig', 'service', 'name');
  if (typeof serviceName !== 'string') throw new Error('the ValidatingWebhookConfiguration names no Service');
  return {
    namespace,
    serviceAccount,
    deployment,
    webhookService: only(manifests, 'Service', serviceName),
    certificate: only(manifests, 'Certificate'),
  };
}

export interface ComponentsExpectations {
  /** `Kind/name` of every object of the components file, in install order. */
  readonly objects: readonly string[];
  /** Every clusterctl variable the components use (each must have a default). */
  readonly variables: readonly string[];
  /** The names of the CRDs the app's package generates: the components hold exactly these. */
  readonly generatedCRDs: readonly string[];
  /** The ValidatingWebhookConfiguration the app's package builds in service mode for this Service and Certificate. */
  webhookConfiguration(labels: Record<string, string>, client: ServiceClientMode): unknown;
}

/** The components file, metadata.yaml, the Deployment and the webhook wiring of `provider`. */
export function describeComponents(provider: ShippedProvider, expected: ComponentsExpectations): void {
  const version = provider.version;
  const components = renderComponents(provider);
  const rendered = parseManifests(substituteVariables(components), provider.componentsFile);
  const manifests = defaultManifests(provider);
  const wiring = providerWiring(provider);
  const { namespace } = wiring;
  const temporary: string[] = [];
  afterAll(() => {
    for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
  });

  describe(`clusterctl components (${provider.componentsFile})`, () => {
    it('holds the expected objects in install order', () => {
      expect(rendered.map((m) => `${m.kind}/${m.metadata.name}`)).toEqual(expected.objects);
    });

    it(`labels every object ${PROVIDER_LABEL}=${provider.providerName} and has exactly one Namespace`, () => {
      const unlabelled = rendered.filter((m) => m.metadata.labels?.[PROVIDER_LABEL] !== provider.providerName);
      expect(unlabelled.map((m) => `${m.kind}/${m.metadata.name}`)).toEqual([]);
      expect(rendered.filter((m) => m.kind === 'Namespace')).toHaveLength(1);
    });

    it('puts every namespaced object, binding subject and webhook service in the one namespace', () => {
      for (const manifest of rendered) {
        expect(manifest.metadata.namespace, `${manifest.kind}/${manifest.metadata.name}`).toBe(
          CLUSTER_SCOPED_KINDS.has(manifest.kind) ? undefined : namespace,
        );
      }
      const bindings = rendered.filter((m) => m.kind.endsWith('RoleBinding'));
      expect(bindings.length).toBeGreaterThan(0);
      for (const binding of bindings) {
        expect(binding.subjects).toEqual([{ kind: 'ServiceAccount', name: wiring.serviceAccount, namespace }]);
      }
      for (const webhook of at(only(rendered, 'ValidatingWebhookConfiguration'), 'webhooks') as unknown[]) {
        expect(at(webhook, 'clientConfig', 'service', 'namespace')).toBe(namespace);
      }
    });

    it('holds exactly the generated CRDs, each with the contract label naming a served version', () => {
      const crds = rendered.filter((m) => m.kind === 'CustomResourceDefinition');
      expect(crds.map((crd) => crd.metadata.name).sort()).toEqual([...expected.generatedCRDs].sort());
      for (const crd of crds) {
        const contractVersion = crd.metadata.labels?.['cluster.x-k8s.io/v1beta2'];
        const served = (at(crd, 'spec', 'versions') as { name: string; served: boolean }[])
          .filter((v) => v.served)
          .map((v) => v.name);
        expect(served, crd.metadata.name).toContain(contractVersion);
      }
    });

    it('uses only well-formed, provider-prefixed variables with defaults, and a literal image of this version', () => {
      const variables = findVariables(components);
      expect(new Set(variables.map((v) => v.name))).toEqual(new Set(expected.variables));
      for (const variable of variables) {
        expect(variable.name.startsWith(provider.variablePrefix), variable.name).toBe(true);
        expect(variable.defaultValue, variable.name).toBeTruthy();
      }
      // clusterctl parses every image (for its `images:` override) before substituting variables.
      const container = at(only(rendered, 'Deployment'), 'spec', 'template', 'spec', 'containers', 0);
      expect(at(container, 'image')).toBe(`${provider.imageRepository}:v${version}`);
      const logLevel = `${provider.variablePrefix}LOG_LEVEL`;
      const overridden = parseManifests(substituteVariables(components, { [logLevel]: 'debug' }), 'overridden');
      const overriddenContainer = at(only(overridden, 'Deployment'), 'spec', 'template', 'spec', 'containers', 0);
      expect(at(overriddenContainer, 'args')).toContain('--log-level=debug');
    });

    it('the generator script writes the components and metadata.yaml for a release', () => {
      const out = mkdtempSync(join(tmpdir(), `${provider.imageName}-release-`));
      temporary.push(out);
      const stdout = execFileSync(
        process.execPath,
        ['--import', 'tsx', join(provider.appDir, 'scripts/render-components.ts'), '--out', out, '--version', '1.2.3'],
        { encoding: 'utf8', cwd: provider.appDir },
      );
      expect(stdout).toContain(`${expected.objects.length} objects, v1.2.3`);
      const written = readFileSync(join(out, provider.componentsFile), 'utf8');
      expect(written).toContain(`image: ${provider.imageRepository}:v1.2.3\n`);
      expect(readFileSync(join(out, 'metadata.yaml'), 'utf8')).toBe(readFileSync(provider.metadataFile, 'utf8'));
    });
  });

  describe('metadata.yaml', () => {
    it('parses as clusterctl Metadata and maps the current release series to contract v1beta2', () => {
      const metadata = parse(readFileSync(provider.metadataFile, 'utf8')) as {
        apiVersion: string;
        kind: string;
        releaseSeries: { major: number; minor: number; contract: string }[];
      };
      expect(metadata.apiVersion).toBe('clusterctl.cluster.x-k8s.io/v1alpha3');
      expect(metadata.kind).toBe('Metadata');
      const [major, minor] = version.split('.').map(Number);
      const series = metadata.releaseSeries.filter((s) => s.major === major && s.minor === minor);
      expect(series).toEqual([{ major, minor, contract: 'v1beta2' }]);
      for (const entry of metadata.releaseSeries) {
        expect(Number.isInteger(entry.major) && Number.isInteger(entry.minor)).toBe(true);
      }
    });
  });

  describe('the Deployment', () => {
    const pod = at(wiring.deployment, 'spec', 'template', 'spec');
    const container = at(pod, 'containers', 0) as Record<string, unknown>;
    const args = container.args as string[];
    const port = (name: string): unknown =>
      (container.ports as { name: string; containerPort: number }[]).find((p) => p.name === name)?.containerPort;

    it('runs one container named manager with leader election, as the service account of the RBAC', () => {
      expect(at(pod, 'containers')).toHaveLength(1);
      expect(container.name).toBe('manager');
      expect(args).toContain('--leader-elect');
      expect(at(pod, 'serviceAccountName')).toBe(wiring.serviceAccount);
    });

    it('probes /healthz and /readyz on the port --health-probe-bind-address opens', () => {
      expect(args).toContain(`--health-probe-bind-address=:${port('healthz')}`);
      expect(at(container, 'livenessProbe', 'httpGet')).toEqual({ path: '/healthz', port: 'healthz' });
      expect(at(container, 'readinessProbe', 'httpGet')).toEqual({ path: '/readyz', port: 'healthz' });
      expect(args).toContain(`--webhook-port=${port('webhook-server')}`);
    });

    it('serves /metrics over HTTPS with authentication on the port the metrics Service targets', () => {
      expect(args).toContain(`--diagnostics-address=:${port('metrics')}`);
      expect(args.filter((arg) => /^--(insecure-diagnostics|metrics-bind-address)/.test(arg))).toEqual([]);
      const metricsService = manifests.find(
        (m) => m.kind === 'Service' && m.metadata.name !== wiring.webhookService.metadata.name,
      );
      expect(at(metricsService, 'spec', 'selector')).toEqual(
        at(wiring.deployment, 'spec', 'template', 'metadata', 'labels'),
      );
      expect(at(metricsService, 'spec', 'ports', 0)).toMatchObject({ port: port('metrics'), targetPort: 'metrics' });
    });

    it('ships a metrics-reader ClusterRole for scrapers: get on the non-resource URL /metrics, nothing else', () => {
      const readers = manifests.filter((m) => m.kind === 'ClusterRole' && m.metadata.name.endsWith('-metrics-reader'));
      expect(readers).toHaveLength(1);
      expect(readers[0]?.rules).toEqual([{ nonResourceURLs: ['/metrics'], verbs: ['get'] }]);
    });

    it('is non-root, read-only, without capabilities, with RuntimeDefault seccomp and bounded resources', () => {
      expect(at(pod, 'securityContext')).toMatchObject({
        runAsNonRoot: true,
        runAsUser: 65532,
        seccompProfile: { type: 'RuntimeDefault' },
      });
      expect(container.securityContext).toMatchObject({
        allowPrivilegeEscalation: false,
        privileged: false,
        readOnlyRootFilesystem: true,
        runAsNonRoot: true,
        capabilities: { drop: ['ALL'] },
      });
      for (const bound of ['requests', 'limits']) {
        expect(at(container, 'resources', bound, 'cpu'), bound).toBeTruthy();
        expect(at(container, 'resources', bound, 'memory'), bound).toBeTruthy();
      }
      // A read-only root needs a writable /tmp (the webhook cert dir lives below it).
      const tmp = (container.volumeMounts as { name: string; mountPath: string }[]).find((m) => m.mountPath === '/tmp');
      const volume = (at(pod, 'volumes') as { name: string; emptyDir?: unknown }[]).find((v) => v.name === tmp?.name);
      expect(volume?.emptyDir).toBeDefined();
    });

    it('mounts the cert-manager Secret where the webhook server reads its certificate', () => {
      const mount = (container.volumeMounts as { name: string; mountPath: string }[]).find(
        (m) => m.mountPath === DEFAULT_WEBHOOK_CERT_DIR,
      );
      const volume = (at(pod, 'volumes') as { name: string; secret?: { secretName: string } }[]).find(
        (v) => v.name === mount?.name,
      );
      expect(wiring.certificate.apiVersion).toBe(CERT_MANAGER_API_VERSION);
      expect(volume?.secret?.secretName).toBe(at(wiring.certificate, 'spec', 'secretName'));
    });
  });

  describe('webhook and certificate wiring', () => {
    const webhook = only(manifests, 'ValidatingWebhookConfiguration');
    const { webhookService: service, certificate } = wiring;
    const issuer = only(manifests, 'Issuer');

    it("is the configuration the app's package builds for service mode (names, paths, rules, policies)", () => {
      const built = expected.webhookConfiguration(
        { [PROVIDER_LABEL]: provider.providerName },
        {
          service: { namespace, name: service.metadata.name },
          certificate: { namespace, name: certificate.metadata.name },
        },
      );
      expect(webhook).toEqual(JSON.parse(JSON.stringify(built)));
    });

    it('has cert-manager inject the CA of the Certificate that covers the webhook Service', () => {
      expect(webhook.metadata.annotations?.['cert-manager.io/inject-ca-from']).toBe(
        `${certificate.metadata.namespace}/${certificate.metadata.name}`,
      );
      expect(at(certificate, 'spec', 'dnsNames')).toContain(`${service.metadata.name}.${namespace}.svc`);
      expect(at(certificate, 'spec', 'issuerRef')).toEqual({ kind: 'Issuer', name: issuer.metadata.name });
      expect(issuer.apiVersion).toBe(CERT_MANAGER_API_VERSION);
      expect(at(issuer, 'spec', 'selfSigned')).toEqual({});
    });

    it('routes the webhook Service to the manager pods on the webhook port', () => {
      expect(at(service, 'spec', 'selector')).toEqual(at(wiring.deployment, 'spec', 'template', 'metadata', 'labels'));
      expect(at(service, 'spec', 'ports', 0)).toMatchObject({ port: 443, targetPort: 'webhook-server' });
    });
  });

  it('every kustomization directory under config/ renders on its own', () => {
    const dirs = readdirSync(provider.configDir).filter((dir) =>
      existsSync(join(provider.configDir, dir, 'kustomization.yaml')),
    );
    expect(dirs.sort()).toEqual(['certmanager', 'crd', 'default', 'manager', 'network-policy', 'rbac', 'webhook']);
    for (const dir of dirs) {
      expect(buildKustomization(join(provider.configDir, dir)).length, dir).toBeGreaterThan(0);
    }
  });

  it('offers an optional NetworkPolicy (not in config/default) admitting only the webhook and diagnostics ports', () => {
    expect(manifests.filter((m) => m.kind === 'NetworkPolicy')).toEqual([]);
    const [policy, ...others] = buildKustomization(join(provider.configDir, 'network-policy'));
    expect(others).toEqual([]);
    expect(policy?.kind).toBe('NetworkPolicy');
    expect(policy?.metadata.namespace).toBe(wiring.namespace);
    expect(at(policy, 'spec', 'podSelector', 'matchLabels')).toEqual(
      at(wiring.deployment, 'spec', 'template', 'metadata', 'labels'),
    );
    expect(at(policy, 'spec', 'policyTypes')).toEqual(['Ingress']);
    const ports = (at(policy, 'spec', 'ingress') as { ports: { port: unknown }[] }[]).flatMap((rule) =>
      rule.ports.map((p) => p.port),
    );
    expect(ports.sort()).toEqual(['metrics', 'webhook-server']);
  });
}

/** One SubjectAccessReview for the app's ServiceAccount and whether it must be allowed. */
export type AccessExpectation = readonly [attributes: V1ResourceAttributes, allowed: boolean];

export interface AppliedExpectations {
  /** What the ServiceAccount must and must not be allowed (least privilege, both ways). */
  readonly access: readonly AccessExpectation[];
}

/**
 * Server-side applies config/default (strict field validation) to the API server of `kubeConfig()`, except the
 * cert-manager objects (their API is not installed) and with the ValidatingWebhookConfiguration as a dry run (a real
 * one would send writes of a shared control plane to a Service without endpoints), then checks what was kept and
 * that the RBAC names only served resources and verbs.
 */
export function describeAppliedComponents(
  provider: ShippedProvider,
  kubeConfig: () => KubeConfig,
  expected: AppliedExpectations,
): void {
  const manifests = defaultManifests(provider);
  const wiring = providerWiring(provider);
  const user = `system:serviceaccount:${wiring.namespace}:${wiring.serviceAccount}`;
  /** What the API server kept of each applied object, by `Kind/name`. */
  const stored = new Map<string, Record<string, unknown>>();
  let client: Client;

  beforeAll(async () => {
    client = new Client(kubeConfig(), { fieldManager: `${provider.imageName}-manifests-test` });
    for (const manifest of manifests) {
      if (manifest.apiVersion === CERT_MANAGER_API_VERSION) continue;
      const dryRun = manifest.kind === 'ValidatingWebhookConfiguration';
      const resource = await resourceKindOf(kubeConfig(), manifest);
      const applied = await client
        .apply(resource, manifest, { force: true, fieldValidation: 'Strict', ...(dryRun ? { dryRun: 'All' } : {}) })
        .catch((error: unknown) => {
          throw new Error(`apply ${manifest.kind}/${manifest.metadata.name}: ${String(error)}`, { cause: error });
        });
      stored.set(`${manifest.kind}/${manifest.metadata.name}`, applied as unknown as Record<string, unknown>);
    }
  });

  afterAll(async () => {
    // The namespace stays (deleting it races the next file's apply); the cluster-scoped RBAC goes.
    for (const manifest of manifests.filter((m) => m.kind === 'ClusterRoleBinding' || m.kind === 'ClusterRole')) {
      const resource = await resourceKindOf(kubeConfig(), manifest);
      await client.delete(resource, { name: manifest.metadata.name }).catch(() => {});
    }
    client?.close();
  });

  describe('config/default on a real API server (server-side apply, strict field validation)', () => {
    it('accepts every object except the cert-manager ones, whose API is not installed here', async () => {
      const applied = manifests.filter((m) => m.apiVersion !== CERT_MANAGER_API_VERSION);
      expect([...stored.keys()]).toEqual(applied.map((m) => `${m.kind}/${m.metadata.name}`));
      expect(manifests.filter((m) => m.apiVersion === CERT_MANAGER_API_VERSION).map((m) => m.kind)).toEqual([
        'Issuer',
        'Certificate',
      ]);
      await expect(discover(kubeConfig(), CERT_MANAGER_API_VERSION)).rejects.toThrow();
    });

    it('keeps the Deployment as written: container manager, security context, probes, cert volume', () => {
      const deployment = stored.get(`Deployment/${wiring.deployment.metadata.name}`);
      const path = ['spec', 'template', 'spec', 'containers', 0] as const;
      expect(at(deployment, ...path, 'name')).toBe('manager');
      expect(at(deployment, ...path, 'securityContext')).toEqual(at(wiring.deployment, ...path, 'securityContext'));
      expect(at(deployment, ...path, 'livenessProbe', 'httpGet', 'path')).toBe('/healthz');
      expect(at(deployment, ...path, 'readinessProbe', 'httpGet', 'path')).toBe('/readyz');
      // As written, plus the API server's defaults (e.g. a Secret volume's defaultMode).
      expect(at(deployment, 'spec', 'template', 'spec', 'volumes')).toMatchObject(
        at(wiring.deployment, 'spec', 'template', 'spec', 'volumes') as object[],
      );
    });

    it('admits the ValidatingWebhookConfiguration with the cert-manager annotation and service-routed webhooks', () => {
      const written = only(manifests, 'ValidatingWebhookConfiguration');
      const webhook = stored.get(`ValidatingWebhookConfiguration/${written.metadata.name}`);
      expect(at(webhook, 'metadata', 'annotations', 'cert-manager.io/inject-ca-from')).toBe(
        `${wiring.namespace}/${wiring.certificate.metadata.name}`,
      );
      const webhooks = at(webhook, 'webhooks') as unknown[];
      expect(webhooks).toHaveLength((at(written, 'webhooks') as unknown[]).length);
      for (const entry of webhooks) {
        expect(at(entry, 'clientConfig', 'service', 'name')).toBe(wiring.webhookService.metadata.name);
      }
    });

    it('names only resources and verbs the API server serves in the RBAC rules', async () => {
      const groups = await kubeConfig().makeApiClient(ApisApi).getAPIVersions();
      const versionsOf = (group: string): string[] =>
        group === ''
          ? ['v1']
          : (groups.groups.find((g) => g.name === group)?.versions.map((v) => v.groupVersion) ?? []);
      const roles = manifests.filter((m) => m.kind === 'ClusterRole' || m.kind === 'Role');
      for (const rule of roles.flatMap((role) => role.rules as V1PolicyRule[])) {
        if (rule.nonResourceURLs) {
          // The metrics-reader role: a non-resource URL is not discovered; it must be the diagnostics path only.
          expect(rule).toEqual({ nonResourceURLs: ['/metrics'], verbs: ['get'] });
          continue;
        }
        expect(rule.apiGroups).toHaveLength(1);
        const group = rule.apiGroups?.[0] ?? '';
        const served = (await Promise.all(versionsOf(group).map((version) => discover(kubeConfig(), version)))).flat();
        for (const name of rule.resources ?? []) {
          const [base = '', subresource] = name.split('/');
          expect(
            served.some((r) => r.name === base),
            `${group} ${base} is served`,
          ).toBe(true);
          if (subresource === 'finalizers') {
            // Not a served subresource: only the OwnerReferencesPermissionEnforcement admission check asks for it.
            expect(rule.verbs, name).toEqual(['update']);
            continue;
          }
          const resource = served.find((r) => r.name === name);
          for (const verb of rule.verbs) expect(resource?.verbs, `${group} ${name} ${verb}`).toContain(verb);
        }
      }
    });

    it('lets the service account review the tokens and access of /metrics callers (diagnostics)', async () => {
      const authorization = kubeConfig().makeApiClient(AuthorizationV1Api);
      for (const [group, resource] of [
        ['authentication.k8s.io', 'tokenreviews'],
        ['authorization.k8s.io', 'subjectaccessreviews'],
      ] as const) {
        const review = await authorization.createSubjectAccessReview({
          body: {
            spec: { user, groups: ['system:serviceaccounts'], resourceAttributes: { verb: 'create', group, resource } },
          },
        });
        expect(review.status?.allowed, `create ${group} ${resource}`).toBe(true);
      }
    });

    it('binds the service account to exactly what the controller needs (SubjectAccessReview)', async () => {
      const authorization = kubeConfig().makeApiClient(AuthorizationV1Api);
      const results = await Promise.all(
        expected.access.map(async ([resourceAttributes]) => {
          const review = await authorization.createSubjectAccessReview({
            body: { spec: { user, groups: ['system:serviceaccounts'], resourceAttributes } },
          });
          return review.status?.allowed ?? false;
        }),
      );
      const describeAttributes = ([a]: AccessExpectation): string =>
        `${a.verb} ${a.group || 'core'} ${a.resource}${a.subresource ? `/${a.subresource}` : ''} in ${a.namespace ?? '(cluster)'}`;
      expect(expected.access.map((entry, index) => `${describeAttributes(entry)}: ${results[index]}`)).toEqual(
        expected.access.map((entry) => `${describeAttributes(entry)}: ${entry[1]}`),
      );
    });
  });
}

/** What the app's own image tests can use once the controller from the image is ready. */
export interface ImageRun {
  readonly plane: ControlPlane;
  /** A client with the control plane's admin identity. */
  readonly admin: Client;
  readonly controller: ImageController;
  readonly image: UnpackedImage;
  /** The controller's webhook server for a url-mode webhook configuration (there is no Service here). */
  readonly webhookClient: UrlClientMode;
  /** A fresh namespace for one test. */
  createNamespace(prefix: string): Promise<string>;
  /** Registers a ValidatingWebhookConfiguration (it takes effect asynchronously: dry-run until it answers). */
  registerWebhooks(configuration: V1ValidatingWebhookConfiguration): Promise<void>;
}

export interface ImageRunOptions {
  /** The control plane of its own: CRDs, and OwnerReferencesPermissionEnforcement to exercise `/finalizers` rules. */
  readonly controlPlane: ControlPlaneOptions;
  /** The Lease the controller holds with `--leader-elect` (its leader-election id). */
  readonly leaseName: string;
  /** Registers the app's own tests (its core path, its webhook); they run before the SIGTERM test. */
  tests(run: () => ImageRun): void;
}

const NAMESPACES: ResourceKind = { apiVersion: 'v1', kind: 'Namespace', plural: 'namespaces', namespaced: false };
const VALIDATING_WEBHOOK_CONFIGURATIONS: ResourceKind = {
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingWebhookConfiguration',
  plural: 'validatingwebhookconfigurations',
  namespaced: false,
};
const LEASES: ResourceKind = {
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  plural: 'leases',
  namespaced: true,
};

function log(provider: ShippedProvider, line: string): void {
  process.stderr.write(`[${provider.imageName} image] ${line}\n`);
}

/** How often the image is started again when another process took the webhook port between choosing and binding. */
const WEBHOOK_PORT_ATTEMPTS = 3;

/**
 * Starts the image with a free webhook port. Port 0 turns the webhook server off, so unlike the health and
 * diagnostics servers it cannot bind a port of its own choosing: a port is chosen beforehand, and when some other
 * process of a busy test machine binds it first (EADDRINUSE in the log), the image starts again on another port.
 */
async function startWithFreeWebhookPort(
  provider: ShippedProvider,
  options: { rootfs: string; tmpSeedDir: string; command: readonly string[] },
): Promise<{ controller: ImageController; webhookPort: number }> {
  for (let attempt = 1; ; attempt += 1) {
    const webhookPort = await freeLoopbackPort();
    try {
      const controller = await startImageController({
        ...options,
        command: [...options.command, `--webhook-port=${webhookPort}`],
      });
      return { controller, webhookPort };
    } catch (error) {
      const portTaken = error instanceof ImageControllerExitedError && /EADDRINUSE/.test(error.output);
      if (!portTaken || attempt >= WEBHOOK_PORT_ATTEMPTS) throw error;
      log(provider, `webhook port ${webhookPort} was taken before the controller bound it; starting it again`);
    }
  }
}

/**
 * Builds the app's image, unpacks it, and runs its entrypoint in the sandbox (read-only root, uid 65532, no
 * capabilities) against a control plane of its own, with the ServiceAccount token of the shipped RBAC and the webhook
 * certificate where the Deployment mounts it; checks the image, the process, leader election, a refusal by RBAC,
 * the app's own tests, and a clean SIGTERM.
 */
export function describeImageRun(provider: ShippedProvider, options: ImageRunOptions): void {
  const wiring = providerWiring(provider);
  const imageRef = defaultImageRef(provider);
  const work = mkdtempSync(join(tmpdir(), `${provider.imageName}-image-run-`));
  let run: ImageRun | undefined;
  let plane: ControlPlane | undefined;
  let admin: Client | undefined;
  let serviceAccountKubeConfig: KubeConfig;

  beforeAll(async () => {
    const buildStarted = Date.now();
    const image = unpackImage(buildImage(provider, { imageRef }), work);
    log(provider, `built in ${Date.now() - buildStarted} ms; archive ${(image.archiveBytes / 1e6).toFixed(1)} MB`);
    plane = await startControlPlane({ ...options.controlPlane, onProgress: (line) => log(provider, line) });
    const planeAdmin = new Client(plane.kubeConfig(), { fieldManager: `${provider.imageName}-image-test` });
    admin = planeAdmin;
    // The provider's RBAC exactly as config/ ships it (namespace, ServiceAccount, roles, bindings).
    for (const manifest of defaultManifests(provider).filter((m) => RBAC_KINDS.has(m.kind))) {
      await planeAdmin.apply(await resourceKindOf(plane.kubeConfig(), manifest), manifest);
    }
    const kubeconfigYaml = await serviceAccountKubeconfig(plane.kubeConfig(), {
      namespace: wiring.namespace,
      name: wiring.serviceAccount,
    });
    serviceAccountKubeConfig = new KubeConfig();
    serviceAccountKubeConfig.loadFromString(kubeconfigYaml);
    // /tmp of the container: the kubeconfig and the webhook certificate (a Secret volume in a cluster).
    const certs = await createServingCertDir(`${provider.imageName}-image-test`);
    seedContainerTmp(join(work, 'seed'), { kubeconfigYaml, servingCertDir: certs.path });
    await certs.remove();
    const { controller, webhookPort } = await startWithFreeWebhookPort(provider, {
      rootfs: image.rootfs,
      tmpSeedDir: join(work, 'seed'),
      command: [
        ...(image.config.Entrypoint ?? []),
        '--kubeconfig=/tmp/kubeconfig',
        '--leader-elect',
        `--leader-election-namespace=${wiring.namespace}`,
        // HTTPS with a self-signed certificate made at start, as in the Deployment (loopback here).
        '--diagnostics-address=127.0.0.1:0',
        '--health-probe-bind-address=127.0.0.1:0',
      ],
    });
    log(provider, `controller from the image ready (/readyz 200) ${controller.readyAfterMs} ms after exec`);
    run = {
      plane,
      admin: planeAdmin,
      controller,
      image,
      webhookClient: { baseUrl: `https://127.0.0.1:${webhookPort}`, caBundlePem: certs.caPem },
      async createNamespace(prefix) {
        const name = `${prefix}-${Date.now().toString(36)}`;
        await planeAdmin.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
        return name;
      },
      async registerWebhooks(configuration) {
        await planeAdmin.create(VALIDATING_WEBHOOK_CONFIGURATIONS, {
          ...configuration,
          metadata: { ...configuration.metadata, name: configuration.metadata?.name ?? '' },
        });
      },
    };
  });

  afterAll(async () => {
    if (run && run.controller.process.exitCode === null) run.controller.process.kill('SIGKILL');
    admin?.close();
    await plane?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  const current = (): ImageRun => {
    if (!run) throw new Error(`the ${provider.imageName} image is not running (beforeAll failed)`);
    return run;
  };

  describe(`the ${provider.imageName} image (docker-archive, run without a container runtime)`, () => {
    it('is tagged, runs node /app/main.mjs as 65532:65532 and holds only node, its libraries, CA certs and the bundle', () => {
      const { image } = current();
      expect(image.repoTags).toEqual([imageRef]);
      expect(image.config.User).toBe(IMAGE_USER);
      expect(image.config.Entrypoint).toEqual(IMAGE_ENTRYPOINT);
      expect(imageFilesBesidesLibraries(image.rootfs)).toEqual(IMAGE_FILES);
      expect(readFileSync(join(image.rootfs, 'etc/passwd'), 'utf8')).toContain('nonroot:x:65532:65532:');
    });

    it('runs as uid and gid 65532 without capabilities, no new privileges, on a read-only root', () => {
      const { cmdline, ...security } = readProcessSecurity(current().controller.process.pid ?? 0);
      expect(cmdline.slice(0, 2)).toEqual(IMAGE_ENTRYPOINT);
      expect(security).toEqual({
        uid: '65532\t65532\t65532\t65532',
        gid: '65532\t65532\t65532\t65532',
        capEff: '0000000000000000',
        capPrm: '0000000000000000',
        noNewPrivs: '1',
        // The mounts as the process sees them: / read-only, writable only /tmp (and /proc, /dev's devices).
        rootReadOnly: true,
        otherWritableMounts: [],
      });
    });

    options.tests(current);

    it('holds its leader-election Lease in its namespace', async () => {
      const lease = await current().admin.get(LEASES, { namespace: wiring.namespace, name: options.leaseName });
      expect(at(lease, 'spec', 'holderIdentity')).toEqual(expect.any(String));
    });

    it('is refused (403) what its RBAC does not grant: listing Secrets', async () => {
      const core = serviceAccountKubeConfig.makeApiClient(CoreV1Api);
      const error = await core.listNamespacedSecret({ namespace: wiring.namespace }).then(
        () => undefined,
        (failure: unknown) => failure,
      );
      expect(asKubeApiError(error)?.statusCode).toBe(403);
      expect(asKubeApiError(error)?.serverMessage).toContain(
        `system:serviceaccount:${wiring.namespace}:${wiring.serviceAccount}`,
      );
      expect(current().controller.output()).not.toMatch(/forbidden/i);
    });

    it('stops cleanly on SIGTERM (exit 0), as the kubelet stops it', async () => {
      const { controller } = current();
      controller.process.kill('SIGTERM');
      const [code] = await controller.exit;
      expect(code, controller.output().slice(-2000)).toBe(0);
    });
  });
}
