/** What the apps' shipping tests ask a real API server: discovery, ServiceAccount credentials, a running image. */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { CoreV1Api, CustomObjectsApi, type KubeConfig, type V1APIResource } from '@kubernetes/client-node';
import type { ResourceKind } from '@tally-ipam/controller-kit/client';
import { stringify } from 'yaml';
import { startInSandbox } from './image.js';
import type { Manifest } from './kustomize.js';

/** The API group version of cert-manager's Issuer and Certificate (not served by a bare test API server). */
export const CERT_MANAGER_API_VERSION = 'cert-manager.io/v1';
/** The kinds that make up an app's RBAC in config/default, applied before its controller runs with the token. */
export const RBAC_KINDS: ReadonlySet<string> = new Set([
  'Namespace',
  'ServiceAccount',
  'ClusterRole',
  'ClusterRoleBinding',
  'Role',
  'RoleBinding',
]);

/** The API server's discovery document for one group version, e.g. `v1` or `ipam.cluster.x-k8s.io/v1beta2`. */
export async function discover(kubeConfig: KubeConfig, apiVersion: string): Promise<V1APIResource[]> {
  if (!apiVersion.includes('/')) return (await kubeConfig.makeApiClient(CoreV1Api).getAPIResources()).resources;
  const [group = '', version = ''] = apiVersion.split('/');
  const list = await kubeConfig.makeApiClient(CustomObjectsApi).getAPIResources({ group, version });
  return list.resources;
}

/** The ResourceKind of a manifest, found through discovery (plural and scope come from the API server). */
export async function resourceKindOf(kubeConfig: KubeConfig, manifest: Manifest): Promise<ResourceKind> {
  const resources = await discover(kubeConfig, manifest.apiVersion);
  const resource = resources.find((candidate) => candidate.kind === manifest.kind && !candidate.name.includes('/'));
  if (!resource) throw new Error(`${manifest.apiVersion} ${manifest.kind} is not served by the API server`);
  return {
    apiVersion: manifest.apiVersion,
    kind: manifest.kind,
    plural: resource.name,
    namespaced: resource.namespaced,
  };
}

/**
 * A kubeconfig for a ServiceAccount with a token from the TokenRequest API and nothing of the admin identity but the
 * API server's address and CA: what the controller gets in its pod.
 */
export async function serviceAccountKubeconfig(
  admin: KubeConfig,
  serviceAccount: { namespace: string; name: string },
): Promise<string> {
  const { namespace, name } = serviceAccount;
  const request = await admin.makeApiClient(CoreV1Api).createNamespacedServiceAccountToken({
    name,
    namespace,
    body: { spec: { audiences: [], expirationSeconds: 3600 } },
  });
  const token = request.status?.token;
  if (!token) throw new Error(`TokenRequest for ${namespace}/${name} returned no token`);
  const cluster = admin.getCurrentCluster();
  if (!cluster?.caData)
    throw new Error('the admin kubeconfig has no certificate-authority-data to trust the API server');
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster: { server: cluster.server, 'certificate-authority-data': cluster.caData } }],
    users: [{ name, user: { token } }],
    contexts: [{ name, context: { cluster: name, user: name, namespace } }],
    'current-context': name,
  });
}

/** A TCP port free on 127.0.0.1 at the time of asking. */
export async function freeLoopbackPort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  server.close();
  await once(server, 'close');
  return port;
}

/**
 * Fills the directory that becomes the container's `/tmp`: `/tmp/kubeconfig` and the webhook certificate at
 * `/tmp/k8s-webhook-server/serving-certs` (in a cluster a Secret volume mounted there).
 */
export function seedContainerTmp(seedDir: string, contents: { kubeconfigYaml: string; servingCertDir: string }): void {
  mkdirSync(join(seedDir, 'k8s-webhook-server'), { recursive: true });
  cpSync(contents.servingCertDir, join(seedDir, 'k8s-webhook-server', 'serving-certs'), { recursive: true });
  writeFileSync(join(seedDir, 'kubeconfig'), contents.kubeconfigYaml, { mode: 0o600 });
}

/** A controller process started from an unpacked image in the sandbox. */
export interface ImageController {
  readonly process: ChildProcess;
  readonly exit: Promise<[number | null, NodeJS.Signals | null]>;
  /** Everything it wrote to stdout and stderr so far. */
  output(): string;
  /** Milliseconds from exec until `/readyz` answered 200. */
  readonly readyAfterMs: number;
}

/** The port of the health probe server, from the process's "serving health probes" log line (pino JSON). */
export function healthProbePort(output: string): number | undefined {
  for (const line of output.split('\n')) {
    if (!line.startsWith('{') || !line.includes('"serving health probes"')) continue;
    try {
      const record = JSON.parse(line) as { msg?: unknown; address?: unknown };
      if (record.msg === 'serving health probes' && typeof record.address === 'string') {
        return Number(record.address.split(':').pop());
      }
    } catch {
      // A line cut by the pipe's chunking: the next chunk completes it.
    }
  }
  return undefined;
}

/** Thrown when the entrypoint exits before `/readyz` answers; carries its exit and everything it wrote. */
export class ImageControllerExitedError extends Error {
  constructor(
    readonly code: number | null,
    readonly signal: NodeJS.Signals | null,
    readonly output: string,
  ) {
    super(
      `the image's entrypoint exited (${signal ? `signal ${signal}` : `code ${code}`}) before it was ready:\n` +
        (output || '(it wrote nothing)'),
    );
    this.name = 'ImageControllerExitedError';
  }
}

/**
 * Starts the image's entrypoint with `command` in the sandbox and waits until `/readyz` answers 200. The command binds
 * its health probes to port 0 (`--health-probe-bind-address=127.0.0.1:0`) and the port is read from its log, so no
 * other process can take the port between choosing and binding it. Fails with its output when it exits first
 * (`ImageControllerExitedError`) or is not ready by `deadlineMs` (a deadline, not a measurement).
 */
export async function startImageController(options: {
  rootfs: string;
  tmpSeedDir: string;
  command: readonly string[];
  deadlineMs?: number;
}): Promise<ImageController> {
  const started = Date.now();
  const child = startInSandbox(options.rootfs, options.tmpSeedDir, options.command);
  const exit = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  // 'close' comes after both pipes ended: only then is everything the process wrote in `output`.
  const closed = once(child, 'close') as Promise<[number | null, NodeJS.Signals | null]>;
  let output = '';
  const collect = (chunk: Buffer): void => {
    output += chunk.toString('utf8');
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  let exited = false;
  void exit.then(() => {
    exited = true;
  });
  const deadlineMs = options.deadlineMs ?? 120_000;
  for (;;) {
    if (exited) {
      const [code, signal] = await closed;
      throw new ImageControllerExitedError(code, signal, output);
    }
    const port = healthProbePort(output);
    const status =
      port === undefined
        ? 0
        : await fetch(`http://127.0.0.1:${port}/readyz`).then(
            (response) => response.status,
            () => 0,
          );
    if (status === 200) break;
    if (Date.now() > started + deadlineMs) {
      child.kill('SIGKILL');
      throw new Error(`not ready after ${deadlineMs} ms:\n${output}`);
    }
    await delay(100);
  }
  return { process: child, exit, output: () => output, readyAfterMs: Date.now() - started };
}
