import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiextensionsV1Api, AppsV1Api, CustomObjectsApi } from '@kubernetes/client-node';
import { ensureClusterctl } from '@tally-ipam/testenv';
import { testEnv } from '@tally-ipam/testenv/vitest';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { z } from 'zod';
import { appsVersion, writeClusterctlRepository } from '../src/artifacts.js';
import { writeStandInRepository } from '../src/capi-stand-in.js';

const version = appsVersion();
const work = mkdtempSync(join(tmpdir(), 'tally-clusterctl-init-'));
let output = '';

const ProviderList = z.object({
  items: z.array(z.object({ metadata: z.object({ name: z.string(), namespace: z.string() }), version: z.string() })),
});

beforeAll(async () => {
  const env = testEnv();
  if (env.external) throw new Error("this test installs into testenv's own control plane, not TALLY_TEST_KUBECONFIG");
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
      env.kubeconfigPath,
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

afterAll(() => {
  rmSync(work, { recursive: true, force: true });
});

it('clusterctl init --ipam tally --infrastructure sim installs every provider over the CRDs testenv installed (objects only: without a kubelet no Deployment runs, and init does not wait for them)', async () => {
  expect(output).toContain('Your management cluster has been initialized successfully!');
  const kc = testEnv().kubeConfig;
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
});
