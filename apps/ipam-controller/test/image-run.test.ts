import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { tallyCRDDirectory } from '@tally-ipam/api-types';
import { asKubeApiError, Client, type ResourceKind } from '@tally-ipam/controller-kit';
import { poolWebhookConfiguration } from '@tally-ipam/ipam-provider';
import {
  buildImage,
  defaultImageRef,
  defaultManifests,
  freeLoopbackPort,
  IMAGE_ENTRYPOINT,
  IMAGE_FILES,
  IMAGE_USER,
  type ImageController,
  imageFilesBesidesLibraries,
  RBAC_KINDS,
  readProcessSecurity,
  resourceKindOf,
  seedContainerTmp,
  serviceAccountKubeconfig,
  startImageController,
  type UnpackedImage,
  unpackImage,
} from '@tally-ipam/ship';
import { type ControlPlane, createServingCertDir, startControlPlane } from '@tally-ipam/testenv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IPAM_PROVIDER } from '../scripts/render-components.js';
import { ADDRESSES, CLAIMS, CLUSTERS, claim, cluster, eventually, field, ipPool, POOLS } from './support.js';

const IMAGE_REF = defaultImageRef(IPAM_PROVIDER);
const NAMESPACE = 'tally-system';
const SERVICE_ACCOUNT = 'tally-ipam-controller-manager';
const EVENTS: ResourceKind = { apiVersion: 'events.k8s.io/v1', kind: 'Event', plural: 'events', namespaced: true };
const LEASES: ResourceKind = {
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  plural: 'leases',
  namespaced: true,
};

const work = mkdtempSync(join(tmpdir(), 'tally-image-run-'));
const seed = join(work, 'seed');
let plane: ControlPlane;
let admin: Client;
let image: UnpackedImage;
let controller: ImageController | undefined;
let serviceAccountKubeConfig: KubeConfig;
let webhookPort = 0;
let webhookCaPem = '';

function log(line: string): void {
  process.stderr.write(`[image-run] ${line}\n`);
}

beforeAll(async () => {
  const buildStarted = Date.now();
  const archive = buildImage(IPAM_PROVIDER, { imageRef: IMAGE_REF });
  log(`image ready in ${Date.now() - buildStarted} ms`);
  image = unpackImage(archive, work);
  log(
    `archive ${(image.archiveBytes / 1e6).toFixed(1)} MB, layer ${(image.layerBytes / 1e6).toFixed(1)} MB uncompressed`,
  );
  // An API server of its own with OwnerReferencesPermissionEnforcement, so the `/finalizers` rules are exercised:
  // IPAddresses carry blockOwnerDeletion owner references to their claim and pool.
  plane = await startControlPlane({
    crds: [tallyCRDDirectory()],
    capiCRDs: ['ipam.cluster.x-k8s.io', 'cluster.x-k8s.io'],
    apiServerFlags: ['--enable-admission-plugins=OwnerReferencesPermissionEnforcement'],
    onProgress: log,
  });
  admin = new Client(plane.kubeConfig(), { fieldManager: 'tally-image-test' });
  // The provider's RBAC exactly as config/ ships it (namespace, ServiceAccount, roles, bindings).
  for (const manifest of defaultManifests(IPAM_PROVIDER).filter((m) => RBAC_KINDS.has(m.kind))) {
    await admin.apply(await resourceKindOf(plane.kubeConfig(), manifest), manifest);
  }
  const kubeconfigYaml = await serviceAccountKubeconfig(plane.kubeConfig(), {
    namespace: NAMESPACE,
    name: SERVICE_ACCOUNT,
  });
  serviceAccountKubeConfig = new KubeConfig();
  serviceAccountKubeConfig.loadFromString(kubeconfigYaml);

  // /tmp of the container: the kubeconfig and the webhook certificate (a Secret volume in a cluster).
  const certs = await createServingCertDir('tally-ipam-image-test');
  seedContainerTmp(seed, { kubeconfigYaml, servingCertDir: certs.path });
  webhookCaPem = certs.caPem;
  await certs.remove();

  const healthPort = await freeLoopbackPort();
  webhookPort = await freeLoopbackPort();
  const args = [
    '--kubeconfig=/tmp/kubeconfig',
    '--leader-elect',
    `--leader-election-namespace=${NAMESPACE}`,
    `--metrics-bind-address=127.0.0.1:${await freeLoopbackPort()}`,
    `--health-probe-bind-address=127.0.0.1:${healthPort}`,
    `--webhook-port=${webhookPort}`,
  ];
  controller = await startImageController({
    rootfs: image.rootfs,
    tmpSeedDir: seed,
    command: [...(image.config.Entrypoint ?? []), ...args],
    healthPort,
  });
  log(`controller from the image ready (/readyz 200) ${controller.readyAfterMs} ms after exec`);
});

afterAll(async () => {
  if (controller && controller.process.exitCode === null) controller.process.kill('SIGKILL');
  admin?.close();
  await plane?.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('the controller image (docker-archive, run without a container runtime)', () => {
  it('is tagged, runs node /app/main.mjs as 65532:65532 and holds only node, its libraries, CA certs and the bundle', () => {
    expect(image.repoTags).toEqual([IMAGE_REF]);
    expect(image.config.User).toBe(IMAGE_USER);
    expect(image.config.Entrypoint).toEqual(IMAGE_ENTRYPOINT);
    expect(imageFilesBesidesLibraries(image.rootfs)).toEqual(IMAGE_FILES);
    expect(readFileSync(join(image.rootfs, 'etc/passwd'), 'utf8')).toContain('nonroot:x:65532:65532:');
  });

  it('runs as uid and gid 65532 without capabilities, no new privileges, on a read-only root', () => {
    const { cmdline, ...security } = readProcessSecurity(controller?.process.pid ?? 0);
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

  it('allocates an address for a claim against a TallyIPPool with the ServiceAccount token (the IPAM core path)', async () => {
    const ns = `image-${Date.now().toString(36)}`;
    await plane
      .kubeConfig()
      .makeApiClient(CoreV1Api)
      .createNamespace({ body: { metadata: { name: ns } } });
    await admin.create(CLUSTERS, cluster(ns, 'workload'));
    await admin.create(POOLS, ipPool(ns, 'pool', { addresses: ['10.210.0.10-10.210.0.20'], prefix: 24 }));
    await admin.create(CLAIMS, claim(ns, 'machine-0', { kind: 'TallyIPPool', name: 'pool' }, 'workload'));
    const address = await eventually('IPAddress for machine-0', () =>
      admin.get(ADDRESSES, { namespace: ns, name: 'machine-0' }),
    ).catch((error: unknown) => {
      throw new Error(
        `${String(error)}\ncontroller output (last 3000 characters):\n${controller?.output().slice(-3000)}`,
        {
          cause: error,
        },
      );
    });
    expect(field(address, 'spec', 'address')).toMatch(/^10\.210\.0\.(1\d|20)$/);
    expect(field(address, 'spec', 'prefix')).toBe(24);
    const claimed = await eventually('claim status.addressRef', async () => {
      const current = await admin.get(CLAIMS, { namespace: ns, name: 'machine-0' });
      if (field(current, 'status', 'addressRef', 'name') === undefined) throw new Error('no status.addressRef yet');
      return current;
    });
    expect(field(claimed, 'status', 'addressRef', 'name')).toBe('machine-0');
    const event = await eventually('AddressAllocated event', async () => {
      const events = await admin.list(EVENTS, { namespace: ns });
      const found = events.items.find((item) => field(item, 'reason') === 'AddressAllocated');
      if (!found) throw new Error('no AddressAllocated event yet');
      return found;
    });
    expect(field(event, 'regarding', 'name')).toBe('machine-0');
    expect(controller?.output()).not.toMatch(/forbidden/i);
  });

  it('serves the pool admission webhook from the certificate in /tmp: a pool with an address cannot be deleted', async () => {
    const ns = `hook-${Date.now().toString(36)}`;
    await plane
      .kubeConfig()
      .makeApiClient(CoreV1Api)
      .createNamespace({ body: { metadata: { name: ns } } });
    await admin.create(CLUSTERS, cluster(ns, 'workload'));
    await admin.create(POOLS, ipPool(ns, 'pool', { addresses: ['10.211.0.10-10.211.0.20'], prefix: 24 }));
    await admin.create(CLAIMS, claim(ns, 'machine-0', { kind: 'TallyIPPool', name: 'pool' }, 'workload'));
    await eventually('IPAddress for machine-0', () => admin.get(ADDRESSES, { namespace: ns, name: 'machine-0' }));
    // The API server calls the webhook server of the process started from the image (url mode: no Service here).
    const configuration = poolWebhookConfiguration({
      name: `tally-image-test-${ns}`,
      client: { baseUrl: `https://127.0.0.1:${webhookPort}`, caBundlePem: webhookCaPem },
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } },
    });
    const webhooks: ResourceKind = {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      plural: 'validatingwebhookconfigurations',
      namespaced: false,
    };
    await admin.create(webhooks, configuration as { metadata: { name: string } });
    // Registration takes effect asynchronously: dry-run deletes until the webhook answers.
    const refusal = await eventually('the webhook refuses the delete', async () => {
      const error = await admin.delete(POOLS, { namespace: ns, name: 'pool' }, { dryRun: 'All' }).then(
        () => undefined,
        (failure: unknown) => failure,
      );
      if (error === undefined) throw new Error('delete admitted: the webhook is not called yet');
      return error;
    });
    expect(String(refusal)).toContain('Pool has IPAddresses allocated');
    await admin.get(POOLS, { namespace: ns, name: 'pool' });
  });

  it('holds its leader-election Lease in its namespace', async () => {
    const lease = await admin.get(LEASES, { namespace: NAMESPACE, name: 'tally-ipam-controller-leader-election' });
    expect(field(lease, 'spec', 'holderIdentity')).toEqual(expect.any(String));
  });

  it('is refused (403) what its RBAC does not grant: reading Secrets', async () => {
    const core = serviceAccountKubeConfig.makeApiClient(CoreV1Api);
    const error = await core.listNamespacedSecret({ namespace: NAMESPACE }).then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(asKubeApiError(error)?.statusCode).toBe(403);
    expect(asKubeApiError(error)?.serverMessage).toContain(`system:serviceaccount:${NAMESPACE}:${SERVICE_ACCOUNT}`);
  });

  it('stops cleanly on SIGTERM (exit 0), as the kubelet stops it', async () => {
    controller?.process.kill('SIGTERM');
    const [code] = (await controller?.exit) ?? [null, null];
    expect(code, controller?.output().slice(-2000)).toBe(0);
  });
});
