import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AdmissionregistrationV1Api,
  type AdmissionregistrationV1WebhookClientConfig,
  ApiException,
  ApiextensionsV1Api,
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
} from '@kubernetes/client-node';
import {
  CAPI_WEBHOOK_CONFIGURATION_NAMES,
  CAPI_WEBHOOK_SERVICE,
  type CapiManager,
  type ControlPlane,
  clusterApiVersion,
  createTestNamespace,
  ensureClusterctl,
  eventually,
  startCapiManager,
  startControlPlane,
  waitFor,
} from '@tally-ipam/testenv';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { z } from 'zod';
import { appsVersion, writeClusterctlRepository } from '../src/artifacts.js';
import { writeStandInRepository } from '../src/capi-stand-in.js';

const version = appsVersion();
/** The run's Cluster API release (TALLY_CAPI_VERSION, else testenv's default): the stand-in serves it, clusterctl installs it. */
const capiVersion = clusterApiVersion();
const work = mkdtempSync(join(tmpdir(), 'tally-clusterctl-init-'));
let output = '';
let plane: ControlPlane | undefined;
let manager: CapiManager | undefined;
/** testenv's progress lines, the webhook keeper's repairs among them. */
const progressLines: string[] = [];

const ProviderList = z.object({
  items: z.array(z.object({ metadata: z.object({ name: z.string(), namespace: z.string() }), version: z.string() })),
});

// What `tally-testenv start --capi` gives a user: a control plane with Cluster API's CRDs and testenv's Cluster API
// manager serving their conversion and admission webhooks from this machine. Its own plane, since the manager and
// clusterctl's install change cluster-wide objects (CRDs, webhook configurations) other suites rely on.
beforeAll(async () => {
  const progress = (message: string): void => {
    progressLines.push(message);
    process.stderr.write(`[clusterctl-init] ${message}\n`);
  };
  plane = await startControlPlane({
    ignoreTestKubeconfig: true,
    capiCRDs: ['cluster.x-k8s.io', 'ipam.cluster.x-k8s.io', 'addons.cluster.x-k8s.io', 'runtime.cluster.x-k8s.io'],
    onProgress: progress,
  });
  manager = await startCapiManager(plane, { onProgress: progress, installCRDs: false, verbosity: 1 });
  const clusterctl = (await ensureClusterctl()).path;
  const standIn = await writeStandInRepository(join(work, 'repository'));
  const ours = writeClusterctlRepository(join(work, 'repository'), version);
  const config = join(work, 'clusterctl.yaml');
  const providers = (parse(readFileSync(ours.configPath, 'utf8')) as { providers: unknown[] }).providers;
  writeFileSync(
    config,
    stringify({
      providers: [...standIn.config.providers, ...providers],
      'cert-manager': standIn.config['cert-manager'],
    }),
  );
  const result = spawnSync(
    clusterctl,
    [
      'init',
      '--config',
      config,
      '--kubeconfig',
      plane.kubeconfigPath,
      ...standIn.initArgs,
      '--ipam',
      `tally:v${version}`,
      '--infrastructure',
      `sim:v${version}`,
    ],
    {
      cwd: work,
      encoding: 'utf8',
      timeout: 600_000,
      env: {
        ...process.env,
        HOME: work,
        XDG_CONFIG_HOME: join(work, '.config'),
        CLUSTERCTL_DISABLE_VERSIONCHECK: 'true',
      },
    },
  );
  // clusterctl reports its progress on stderr.
  output = `${result.stdout}${result.stderr}`;
  if (result.status !== 0) throw new Error(`clusterctl init exited ${result.status ?? result.signal}:\n${output}`);
});

afterAll(async () => {
  await manager?.stop();
  await plane?.stop();
  rmSync(work, { recursive: true, force: true });
});

it("clusterctl init --ipam tally --infrastructure sim installs every provider over the CRDs testenv installed, while testenv's Cluster API manager serves them (objects only: without a kubelet no Deployment runs, and init does not wait for them)", async () => {
  expect(output).toContain('Your management cluster has been initialized successfully!');
  if (!plane || !manager) throw new Error('beforeAll did not start the control plane and the manager');
  const kc = plane.kubeConfig();
  const inventory = ProviderList.parse(
    await kc.makeApiClient(CustomObjectsApi).listCustomObjectForAllNamespaces({
      group: 'clusterctl.cluster.x-k8s.io',
      version: 'v1alpha3',
      plural: 'providers',
    }),
  );
  expect(inventory.items.map((p) => `${p.metadata.namespace}/${p.metadata.name}@${p.version}`).sort()).toEqual([
    `capi-kubeadm-bootstrap-system/bootstrap-kubeadm@${capiVersion}`,
    `capi-kubeadm-control-plane-system/control-plane-kubeadm@${capiVersion}`,
    `capi-system/cluster-api@${capiVersion}`,
    `sim-system/infrastructure-sim@v${version}`,
    `tally-system/ipam-tally@v${version}`,
  ]);
  const apps = kc.makeApiClient(AppsV1Api);
  const tally = await apps.readNamespacedDeployment({
    name: 'tally-ipam-controller-manager',
    namespace: 'tally-system',
  });
  expect(tally.spec?.template.spec?.containers[0]?.image).toBe(`ghcr.io/tally-ipam/ipam-controller:v${version}`);
  const sim = await apps.readNamespacedDeployment({ name: 'sim-infra-controller-manager', namespace: 'sim-system' });
  expect(sim.spec?.template.spec?.containers[0]?.image).toBe(`ghcr.io/tally-ipam/sim-infra-controller:v${version}`);
});

/** A bound against hangs only; on a loaded 2-core machine the API server picks up a changed configuration late. */
const WAIT = { timeoutMs: 180_000, intervalMs: 250 } as const;

function pointsAtManager(clientConfig: AdmissionregistrationV1WebhookClientConfig, port: number): boolean {
  return (
    clientConfig.url?.startsWith(`https://127.0.0.1:${port}/`) === true &&
    clientConfig.service === undefined &&
    (clientConfig.caBundle ?? '') !== ''
  );
}

const ClusterObject = z.object({
  apiVersion: z.string(),
  metadata: z.object({ name: z.string() }),
  spec: z.object({ infrastructureRef: z.object({ apiGroup: z.string(), kind: z.string(), name: z.string() }) }),
});

it("after clusterctl init wrote Cluster API's real webhook configurations and Service over testenv's, testenv puts its manager back behind them: a v1beta2 Cluster and a v1beta1 one are created through its admission webhooks and conversion", async () => {
  if (!plane || !manager) throw new Error('beforeAll did not start the control plane and the manager');
  const kc = plane.kubeConfig();
  const port = manager.webhookPort;
  const logHint = `${manager.logPath} (the keeper's lines start with [tally-testenv])`;
  // What clusterctl's merge patches did, as the keeper saw and reported it: every webhook of both configurations at
  // the Service's port 443 without a caBundle, and the Service's ports replaced by 443.
  await waitFor(
    "the webhook keeper's repairs of both webhook configurations and the Service",
    () =>
      Object.values(CAPI_WEBHOOK_CONFIGURATION_NAMES).every((name) =>
        progressLines.some(
          (line) => line.includes(name) && line.includes('service capi-system/capi-webhook-service:443, no caBundle'),
        ),
      ) && progressLines.some((line) => /Service capi-system\/capi-webhook-service had .*ports 443;/.test(line)),
    { ...WAIT, describe: () => progressLines.filter((line) => line.includes('webhook keeper')), hint: logHint },
  );
  const admission = kc.makeApiClient(AdmissionregistrationV1Api);
  await waitFor(
    'both webhook configurations to point at the manager again',
    async () => {
      const mutating = await admission.readMutatingWebhookConfiguration({
        name: CAPI_WEBHOOK_CONFIGURATION_NAMES.mutating,
      });
      const validating = await admission.readValidatingWebhookConfiguration({
        name: CAPI_WEBHOOK_CONFIGURATION_NAMES.validating,
      });
      const webhooks = [...(mutating.webhooks ?? []), ...(validating.webhooks ?? [])];
      return webhooks.length > 0 && webhooks.every((webhook) => pointsAtManager(webhook.clientConfig, port));
    },
    { ...WAIT, hint: logHint },
  );
  const service = await kc.makeApiClient(CoreV1Api).readNamespacedService(CAPI_WEBHOOK_SERVICE);
  expect({ type: service.spec?.type, externalName: service.spec?.externalName }).toEqual({
    type: 'ExternalName',
    externalName: 'localhost',
  });
  // clusterctl's patch of the CRDs named the Service without a port, so the manager's port stayed.
  const clusters = await kc
    .makeApiClient(ApiextensionsV1Api)
    .readCustomResourceDefinition({ name: 'clusters.cluster.x-k8s.io' });
  expect(clusters.spec.conversion?.webhook?.clientConfig).toMatchObject({
    service: { ...CAPI_WEBHOOK_SERVICE, path: '/convert', port },
  });
  expect(clusters.spec.conversion?.webhook?.clientConfig?.url).toBeUndefined();
  expect(manager.running()).toBe(true);

  const custom = kc.makeApiClient(CustomObjectsApi);
  const ns = await createTestNamespace(kc, 'clusterctl-init');
  try {
    const clusterRef = { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'SimCluster', name: 'sim' };
    // The API server reloads webhook configurations asynchronously: until it has, the webhooks still fail.
    const created = await eventually(
      'a v1beta2 Cluster create through the admission webhooks',
      async () =>
        ClusterObject.parse(
          await custom.createNamespacedCustomObject({
            group: 'cluster.x-k8s.io',
            version: 'v1beta2',
            namespace: ns.name,
            plural: 'clusters',
            body: {
              apiVersion: 'cluster.x-k8s.io/v1beta2',
              kind: 'Cluster',
              metadata: { name: 'after-init-v1beta2' },
              spec: { infrastructureRef: clusterRef },
            },
          }),
        ),
      { ...WAIT, hint: logHint },
    );
    expect(created.spec.infrastructureRef).toEqual(clusterRef);
    // Written as v1beta1: converted to the v1beta2 storage version (and for the webhooks) by /convert, and back.
    const v1beta1 = ClusterObject.extend({
      spec: z.object({ infrastructureRef: z.object({ apiVersion: z.string(), kind: z.string(), name: z.string() }) }),
    }).parse(
      await custom.createNamespacedCustomObject({
        group: 'cluster.x-k8s.io',
        version: 'v1beta1',
        namespace: ns.name,
        plural: 'clusters',
        body: {
          apiVersion: 'cluster.x-k8s.io/v1beta1',
          kind: 'Cluster',
          metadata: { name: 'after-init-v1beta1' },
          spec: {
            infrastructureRef: {
              apiVersion: 'infrastructure.cluster.x-k8s.io/v1alpha1',
              kind: 'SimCluster',
              name: 'sim',
              namespace: ns.name,
            },
          },
        },
      }),
    );
    expect(v1beta1.apiVersion).toBe('cluster.x-k8s.io/v1beta1');
    expect(v1beta1.spec.infrastructureRef.kind).toBe('SimCluster');
    const stored = ClusterObject.parse(
      await custom.getNamespacedCustomObject({
        group: 'cluster.x-k8s.io',
        version: 'v1beta2',
        namespace: ns.name,
        plural: 'clusters',
        name: 'after-init-v1beta1',
      }),
    );
    expect(stored.spec.infrastructureRef).toEqual(clusterRef);
    // The validating webhook itself answers: this rule is Cluster API's Go code, not the CRD's schema.
    const denied = await custom
      .createNamespacedCustomObject({
        group: 'cluster.x-k8s.io',
        version: 'v1beta2',
        namespace: ns.name,
        plural: 'clusters',
        dryRun: 'All',
        body: {
          apiVersion: 'cluster.x-k8s.io/v1beta2',
          kind: 'Cluster',
          metadata: { name: 'no-refs' },
          spec: { clusterNetwork: { serviceDomain: 'cluster.local' } },
        },
      })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(denied).toBeInstanceOf(ApiException);
    expect(String((denied as ApiException<unknown>).body)).toContain(
      'one of spec.controlPlaneRef, spec.infrastructureRef or spec.topology must be set',
    );
  } finally {
    await ns.delete();
  }
});
