import { setMaxListeners } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import { AdmissionregistrationV1Api } from '@kubernetes/client-node';
import {
  CLUSTER_GROUP,
  calculateCRDName,
  IPADDRESS_KIND,
  IPADDRESSCLAIM_KIND,
  IPAM_GROUP,
  TALLY_GROUP,
  TALLY_IP_POOL_KIND,
  TALLY_PREFIX_POOL_KIND,
  tallyCRDDirectory,
} from '@tally-ipam/api-types';
import { type Client, isAlreadyExists, type Manager, type WebhookServer } from '@tally-ipam/controller-kit';
import { poolWebhookConfiguration } from '@tally-ipam/ipam-provider';
import { type ControlPlane, startControlPlane } from '@tally-ipam/testenv';
import type { AppFlags } from '../app-flags.js';
import { buildController, MANAGER_NAME } from '../run-controller.js';
import { createServingCertDir, type ServingCertDir } from '../serving-certs.js';
import { createDemoLogger, type DemoLogger } from './demo-logger.js';
import {
  CLAIMS,
  CLUSTERS,
  claimObject,
  clusterObject,
  DEMO_CLAIMS,
  DEMO_NAMESPACE,
  DEMO_POOLS,
  NAMESPACES,
  poolObject,
} from './demo-objects.js';
import { formatReport, waitForDemoReport } from './demo-report.js';

/** The line tests and users look for: everything above it is set up and the table follows. */
export const DEMO_READY_LINE = 'Tally is allocating. Claims and the addresses they got:';

/** What the printed kubectl line lists: the demo's pools, claims and addresses. */
export const DEMO_KUBECTL_RESOURCES: readonly string[] = [
  calculateCRDName(TALLY_GROUP, TALLY_IP_POOL_KIND),
  calculateCRDName(TALLY_GROUP, TALLY_PREFIX_POOL_KIND),
  calculateCRDName(IPAM_GROUP, IPADDRESSCLAIM_KIND),
  calculateCRDName(IPAM_GROUP, IPADDRESS_KIND),
];

type Print = (line: string) => void;

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

async function createIgnoringExisting(client: Client, create: (client: Client) => Promise<unknown>): Promise<void> {
  try {
    await create(client);
  } catch (error) {
    if (!isAlreadyExists(error)) throw error;
  }
}

async function applyDemoObjects(client: Client): Promise<void> {
  await createIgnoringExisting(client, (c) => c.create(NAMESPACES, { metadata: { name: DEMO_NAMESPACE } }));
  await createIgnoringExisting(client, (c) => c.create(CLUSTERS, clusterObject()));
  for (const pool of DEMO_POOLS) await createIgnoringExisting(client, (c) => c.create(pool.resource, poolObject(pool)));
  for (const claim of DEMO_CLAIMS) await createIgnoringExisting(client, (c) => c.create(CLAIMS, claimObject(claim)));
}

/** Resolves with the webhook server's port once it listens; rejects if the manager fails first. */
async function webhookPort(webhooks: WebhookServer, running: Promise<void>): Promise<number> {
  let outcome: { error: unknown } | undefined;
  running.then(
    () => {
      outcome = { error: new Error('the controller stopped before its webhook server listened') };
    },
    (error: unknown) => {
      outcome = { error };
    },
  );
  for (;;) {
    if (outcome) throw outcome.error;
    const address = webhooks.address();
    if (address) return address.port;
    await delay(50);
  }
}

/** Registers the pool webhooks with the local API server in url mode, trusting the throwaway CA. */
async function registerWebhooks(plane: ControlPlane, port: number, certs: ServingCertDir): Promise<void> {
  await plane
    .kubeConfig()
    .makeApiClient(AdmissionregistrationV1Api)
    .createValidatingWebhookConfiguration({
      body: poolWebhookConfiguration({ client: { baseUrl: `https://127.0.0.1:${port}`, caBundlePem: certs.caPem } }),
    });
}

function describeEndpoints(manager: Manager, webhooks: WebhookServer | undefined): string {
  const parts = [
    manager.metricsPort ? `metrics http://127.0.0.1:${manager.metricsPort}/metrics` : undefined,
    manager.healthProbePort ? `health http://127.0.0.1:${manager.healthProbePort}/readyz` : undefined,
    webhooks?.address() ? `webhooks https://127.0.0.1:${webhooks.address()?.port}` : undefined,
  ];
  return parts.filter((part) => part !== undefined).join(', ');
}

/**
 * `npm start` without a cluster: an embedded control plane (etcd, kube-apiserver, kube-controller-manager from
 * @tally-ipam/testenv), the CRDs, the controller with its admission webhook, a demo, a table, and a clean stop on
 * Ctrl-C. Everything it starts is stopped before it returns; testenv's watchdog covers a hard kill.
 */
export async function runDemo(flags: AppFlags, signal: AbortSignal, print: Print): Promise<number> {
  const started = Date.now();
  // Building from source is announced by the progress lines, only when it happens (the first run on a machine).
  print('No kubeconfig given (--kubeconfig, $KUBECONFIG, in-cluster): starting an embedded local control plane.');
  // A start cannot be cancelled half-way (a build or a process launch in flight): say so, and stop right after.
  const onEarlyStop = (): void => print('Stopping once the control plane has started (Ctrl-C again to exit at once).');
  signal.addEventListener('abort', onEarlyStop, { once: true });
  const plane = await startControlPlane({
    controllerManager: true,
    ignoreTestKubeconfig: true,
    crds: [tallyCRDDirectory()],
    capiCRDs: [IPAM_GROUP, CLUSTER_GROUP],
    onProgress: (message) => print(`  ${message}`),
  });
  let certs: ServingCertDir | undefined;
  const stopController = new AbortController();
  signal.removeEventListener('abort', onEarlyStop);
  const forward = (): void => stopController.abort(signal.reason);
  if (signal.aborted) forward();
  else signal.addEventListener('abort', forward, { once: true });
  // Each informer and controller listens on this signal; the default limit of 10 listeners would warn.
  setMaxListeners(100, stopController.signal);
  let running: Promise<void> | undefined;
  let log: DemoLogger | undefined;
  try {
    print(`Control plane ${plane.version} ready at ${plane.server} after ${seconds(Date.now() - started)}.`);
    if (signal.aborted) return 0;
    const webhooksOn = flags.webhook.port !== 0;
    certs = webhooksOn ? await createServingCertDir() : undefined;
    log = createDemoLogger(MANAGER_NAME, flags.manager.logLevel);
    const logger = log.logger;
    print(`Controller log: ${log.path}`);
    const { manager, webhooks } = buildController({
      kubeConfig: plane.kubeConfig(),
      flags: certs ? { ...flags, webhook: { ...flags.webhook, certDir: certs.path } } : flags,
      logger,
      webhookHost: '127.0.0.1',
      webhookPort: flags.given.has('webhook-port') ? flags.webhook.port : 0,
      metricsBindAddress: flags.given.has('metrics-bind-address') ? undefined : '127.0.0.1:0',
      healthProbeBindAddress: flags.given.has('health-probe-bind-address') ? undefined : '127.0.0.1:0',
    });
    running = manager.start(stopController.signal);
    if (webhooks && certs) {
      await registerWebhooks(plane, await webhookPort(webhooks, running), certs);
    }
    print(`Controller running (${describeEndpoints(manager, webhooks)}).`);
    print(
      `Applying the demo to namespace ${DEMO_NAMESPACE}: 3 pools, a Cluster, ${DEMO_CLAIMS.length} IPAddressClaims.`,
    );
    await applyDemoObjects(manager.client);
    const report = await Promise.race([waitForDemoReport(manager.client, signal), running.then(() => undefined)]);
    if (report) {
      print('');
      print(DEMO_READY_LINE);
      print('');
      print(formatReport(report));
      print('');
      print(`Demo ready ${seconds(Date.now() - started)} after start. Try it from another terminal:`);
      print(`  export KUBECONFIG=${plane.kubeconfigPath}`);
      // Fully qualified: since Kubernetes 1.33 plain `ipaddresses` is the core networking.k8s.io kind.
      print(`  kubectl get ${DEMO_KUBECTL_RESOURCES.join(',')} -n ${DEMO_NAMESPACE}`);
      print('Press Ctrl-C to stop (the control plane and its data are removed).');
    }
    await running;
    print('Stopped the controller.');
    return 0;
  } catch (error) {
    if (signal.aborted) return 0;
    throw error;
  } finally {
    signal.removeEventListener('abort', forward);
    stopController.abort();
    await running?.catch(() => undefined);
    await plane.stop();
    await certs?.remove();
    log?.flush();
    print('Stopped the local control plane.');
    // Kept on purpose: the log is what explains a demo that went wrong, after it has gone.
    if (log) print(`Controller log kept at ${log.path}`);
  }
}
