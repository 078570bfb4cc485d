import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { tallyCRDDirectory } from '@tally-ipam/api-types';
import { asKubeApiError, Client, type ResourceKind } from '@tally-ipam/controller-kit';
import { poolWebhookConfiguration } from '@tally-ipam/ipam-provider';
import { type ControlPlane, startControlPlane } from '@tally-ipam/testenv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { APP_DIR } from '../scripts/render-components.js';
import { createServingCertDir } from '../src/serving-certs.js';
import { defaultManifests, resourceKindOf } from './ship-support.js';
import { ADDRESSES, CLAIMS, CLUSTERS, claim, cluster, eventually, field, ipPool, POOLS } from './support.js';

const IMAGE_REF = 'ghcr.io/tally-ipam/ipam-controller:dev';
const OUT_DIR = join(APP_DIR, 'dist', 'image');
const NAMESPACE = 'tally-system';
const SERVICE_ACCOUNT = 'tally-ipam-controller-manager';
const RBAC_KINDS = new Set(['Namespace', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding']);
const EVENTS: ResourceKind = { apiVersion: 'events.k8s.io/v1', kind: 'Event', plural: 'events', namespaced: true };
const LEASES: ResourceKind = {
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  plural: 'leases',
  namespaced: true,
};

interface ImageConfig {
  config: { User?: string; Entrypoint?: string[]; WorkingDir?: string; Env?: string[] };
}

const work = mkdtempSync(join(tmpdir(), 'tally-image-run-'));
const rootfs = join(work, 'rootfs');
const seed = join(work, 'seed');
let plane: ControlPlane;
let admin: Client;
let imageConfig: ImageConfig;
let repoTags: string[] = [];
let controller: ChildProcess | undefined;
let controllerExit: Promise<[number | null, NodeJS.Signals | null]> | undefined;
let output = '';
let startupMs = 0;
let serviceAccountKubeConfig: KubeConfig;
let healthPort = 0;
let webhookPort = 0;
let webhookCaPem = '';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function log(line: string): void {
  process.stderr.write(`[image-run] ${line}\n`);
}

/** Builds the image (image/build.sh reuses the archive when its inputs are unchanged) and unpacks its one layer. */
function buildAndUnpack(): void {
  const started = Date.now();
  execFileSync('bash', [join(APP_DIR, 'image/build.sh')], {
    env: { ...process.env, IMAGE_REF, OUT_DIR },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  log(`image ready in ${Date.now() - started} ms`);
  const archive = join(OUT_DIR, 'ipam-controller.tar');
  const extracted = join(work, 'archive');
  mkdirSync(extracted);
  execFileSync('tar', ['-xf', archive, '-C', extracted]);
  const [manifest] = JSON.parse(readFileSync(join(extracted, 'manifest.json'), 'utf8')) as {
    Config: string;
    RepoTags: string[];
    Layers: string[];
  }[];
  if (manifest?.Layers.length !== 1) throw new Error(`${archive}: expected one image with one layer`);
  repoTags = manifest.RepoTags;
  imageConfig = JSON.parse(readFileSync(join(extracted, manifest.Config), 'utf8')) as ImageConfig;
  mkdirSync(rootfs);
  execFileSync('tar', ['-xf', join(extracted, manifest.Layers[0] ?? ''), '-C', rootfs]);
  const layerBytes = statSync(join(extracted, manifest.Layers[0] ?? '')).size;
  log(
    `archive ${(statSync(archive).size / 1e6).toFixed(1)} MB, layer ${(layerBytes / 1e6).toFixed(1)} MB uncompressed`,
  );
}

/** A token for the provider's ServiceAccount from the TokenRequest API, in a kubeconfig without any admin identity. */
async function serviceAccountKubeconfig(): Promise<string> {
  const core = plane.kubeConfig().makeApiClient(CoreV1Api);
  const request = await core.createNamespacedServiceAccountToken({
    name: SERVICE_ACCOUNT,
    namespace: NAMESPACE,
    body: { spec: { audiences: [], expirationSeconds: 3600 } },
  });
  const token = request.status?.token;
  if (!token) throw new Error(`TokenRequest for ${NAMESPACE}/${SERVICE_ACCOUNT} returned no token`);
  const caData = plane.kubeConfig().getCurrentCluster()?.caData;
  if (!caData) throw new Error('the admin kubeconfig has no certificate-authority-data to trust the API server with');
  const name = 'tally-ipam-controller';
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster: { server: plane.server, 'certificate-authority-data': caData } }],
    users: [{ name, user: { token } }],
    contexts: [{ name, context: { cluster: name, user: name, namespace: NAMESPACE } }],
    'current-context': name,
  });
}

async function httpStatus(url: string): Promise<number> {
  try {
    return (await fetch(url)).status;
  } catch {
    return 0;
  }
}

beforeAll(async () => {
  buildAndUnpack();
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
  for (const manifest of defaultManifests().filter((m) => RBAC_KINDS.has(m.kind))) {
    await admin.apply(await resourceKindOf(plane.kubeConfig(), manifest), manifest);
  }
  const kubeconfig = await serviceAccountKubeconfig();
  serviceAccountKubeConfig = new KubeConfig();
  serviceAccountKubeConfig.loadFromString(kubeconfig);

  // /tmp of the container: the kubeconfig and the webhook certificate (a Secret volume in a cluster).
  const certs = await createServingCertDir();
  mkdirSync(join(seed, 'k8s-webhook-server'), { recursive: true });
  cpSync(certs.path, join(seed, 'k8s-webhook-server', 'serving-certs'), { recursive: true });
  webhookCaPem = certs.caPem;
  await certs.remove();
  writeFileSync(join(seed, 'kubeconfig'), kubeconfig, { mode: 0o600 });

  healthPort = await freePort();
  webhookPort = await freePort();
  const args = [
    '--kubeconfig=/tmp/kubeconfig',
    '--leader-elect',
    `--leader-election-namespace=${NAMESPACE}`,
    `--metrics-bind-address=127.0.0.1:${await freePort()}`,
    `--health-probe-bind-address=127.0.0.1:${healthPort}`,
    `--webhook-port=${webhookPort}`,
  ];
  const entrypoint = imageConfig.config.Entrypoint ?? [];
  const started = Date.now();
  controller = spawn(join(APP_DIR, 'image/sandbox-run.sh'), [rootfs, seed, ...entrypoint, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  controllerExit = once(controller, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  controller.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  controller.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  let exited = false;
  void controllerExit.then(() => {
    exited = true;
  });
  for (;;) {
    if (exited) throw new Error(`the image's entrypoint exited before it was ready:\n${output}`);
    if ((await httpStatus(`http://127.0.0.1:${healthPort}/readyz`)) === 200) break;
    if (Date.now() - started > 120_000) throw new Error(`not ready after 120 s:\n${output}`);
    await delay(100);
  }
  startupMs = Date.now() - started;
  log(`controller from the image ready (/readyz 200) ${startupMs} ms after exec`);
});

afterAll(async () => {
  if (controller && controller.exitCode === null) controller.kill('SIGKILL');
  admin?.close();
  await plane?.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('the controller image (docker-archive, run without a container runtime)', () => {
  it('is tagged, runs node /app/main.mjs as 65532:65532 and holds only node, its libraries, CA certs and the bundle', () => {
    expect(repoTags).toEqual([IMAGE_REF]);
    expect(imageConfig.config.User).toBe('65532:65532');
    expect(imageConfig.config.Entrypoint).toEqual(['/usr/bin/node', '/app/main.mjs']);
    const files = execFileSync('find', ['.', '-type', 'f'], { cwd: rootfs, encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .sort();
    expect(files.filter((file) => !/^\.\/(lib|lib64)\/.+\.so(\.\d+)*$/.test(file))).toEqual([
      './app/main.mjs',
      './etc/group',
      './etc/passwd',
      './etc/ssl/certs/ca-certificates.crt',
      './usr/bin/node',
    ]);
    expect(readFileSync(join(rootfs, 'etc/passwd'), 'utf8')).toContain('nonroot:x:65532:65532:');
  });

  it('runs as uid and gid 65532 without capabilities, no new privileges, on a read-only root', () => {
    const pid = controller?.pid ?? 0;
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    expect(status).toMatch(/^Uid:\t65532\t65532\t65532\t65532$/m);
    expect(status).toMatch(/^Gid:\t65532\t65532\t65532\t65532$/m);
    expect(status).toMatch(/^CapEff:\t0000000000000000$/m);
    expect(status).toMatch(/^CapPrm:\t0000000000000000$/m);
    expect(status).toMatch(/^NoNewPrivs:\t1$/m);
    expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(0, 2)).toEqual([
      '/usr/bin/node',
      '/app/main.mjs',
    ]);
    // The mounts as the process sees them (paths relative to its root): / read-only, writable only /tmp.
    const mounts = readFileSync(`/proc/${pid}/mountinfo`, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => ({ point: line.split(' ')[4] ?? '', options: (line.split(' ')[5] ?? '').split(',') }));
    const writable = mounts.filter((mount) => mount.options.includes('rw')).map((mount) => mount.point);
    expect(mounts.filter((mount) => mount.point === '/').at(-1)?.options).toContain('ro');
    expect(writable.filter((point) => point !== '/tmp' && !point.startsWith('/dev/') && point !== '/proc')).toEqual([]);
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
      throw new Error(`${String(error)}\ncontroller output (last 3000 characters):\n${output.slice(-3000)}`, {
        cause: error,
      });
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
    expect(output).not.toMatch(/forbidden/i);
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
    controller?.kill('SIGTERM');
    const [code] = (await controllerExit) ?? [null, null];
    expect(code, output.slice(-2000)).toBe(0);
  });
});
