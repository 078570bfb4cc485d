import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiextensionsV1Api, AppsV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import {
  CAPI_WEBHOOK_SERVICE,
  type CapiManager,
  type ControlPlane,
  ensureClusterctl,
  startCapiManager,
  startControlPlane,
} from '@tally-ipam/testenv';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { z } from 'zod';
import { appsVersion, writeClusterctlRepository } from '../src/artifacts.js';
import { writeStandInRepository } from '../src/capi-stand-in.js';

const version = appsVersion();
const work = mkdtempSync(join(tmpdir(), 'tally-clusterctl-init-'));
let output = '';
let plane: ControlPlane | undefined;
let manager: CapiManager | undefined;

const ProviderList = z.object({
  items: z.array(z.object({ metadata: z.object({ name: z.string(), namespace: z.string() }), version: z.string() })),
});

// What `tally-testenv start --capi` gives a user: a control plane with Cluster API's CRDs and testenv's Cluster API
// manager serving their conversion and admission webhooks from this machine. Its own plane, since the manager and
// clusterctl's install change cluster-wide objects (CRDs, webhook configurations) other suites rely on.
beforeAll(async () => {
  const progress = (message: string): void => {
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
    'capi-kubeadm-bootstrap-system/bootstrap-kubeadm@v1.12.10',
    'capi-kubeadm-control-plane-system/control-plane-kubeadm@v1.12.10',
    'capi-system/cluster-api@v1.12.10',
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
  // clusterctl's own install took over Cluster API's CRDs, conversion settings included.
  const claims = await kc
    .makeApiClient(ApiextensionsV1Api)
    .readCustomResourceDefinition({ name: 'ipaddressclaims.ipam.cluster.x-k8s.io' });
  expect(claims.spec.conversion?.webhook?.clientConfig?.service?.name).toBe('capi-webhook-service');
  expect(claims.spec.conversion?.webhook?.clientConfig?.url).toBeUndefined();
  // clusterctl's merge patch named the Service testenv's manager is reached through, so conversion still works: a
  // v1beta1 write (dry run) goes through the conversion webhook to the v1beta2 storage version and back.
  expect(claims.spec.conversion?.webhook?.clientConfig?.service?.namespace).toBe(CAPI_WEBHOOK_SERVICE.namespace);
  expect(manager.running()).toBe(true);
  const created = await kc.makeApiClient(CustomObjectsApi).createNamespacedCustomObject({
    group: 'ipam.cluster.x-k8s.io',
    version: 'v1beta1',
    namespace: 'default',
    plural: 'ipaddressclaims',
    dryRun: 'All',
    body: {
      apiVersion: 'ipam.cluster.x-k8s.io/v1beta1',
      kind: 'IPAddressClaim',
      metadata: { name: 'after-clusterctl-init' },
      spec: { poolRef: { apiGroup: 'ipam.tally.dev', kind: 'Probe', name: 'probe' } },
    },
  });
  expect(z.object({ apiVersion: z.string() }).parse(created).apiVersion).toBe('ipam.cluster.x-k8s.io/v1beta1');
});
