import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { KubeConfig, KubernetesObjectApi, loadYaml, PatchStrategy } from '@kubernetes/client-node';
import { tallyCRDDirectory } from '@tally-ipam/api-types';
import { simCRDDirectory } from '@tally-ipam/sim-infra';
import { createServingCertDir, type ServingCertDir } from '@tally-ipam/testenv';
import { createGlobalSetup, type GlobalSetup } from '@tally-ipam/testenv/vitest';
import { z } from 'zod';
import {
  APPS,
  APPS_PROVIDE_KEY,
  type AppKey,
  METAL3_PROVIDE_KEY,
  type StartedApp,
  startApp,
  WEBHOOKS_PROVIDE_KEY,
} from './apps.js';
import {
  awaitWebhooksAnswer,
  type RegisteredWebhookConfiguration,
  registerAppWebhooks,
  unregisterWebhooks,
} from './webhooks.js';

/** Sim's ClusterRole aggregated into Cluster API's manager role (what its provider components ship). */
const SIM_CAPI_ROLE = fileURLToPath(
  new URL('../../apps/sim-infra-controller/config/rbac/capi-aggregated-role.yaml', import.meta.url),
);

const ClusterRole = z.looseObject({
  apiVersion: z.literal('rbac.authorization.k8s.io/v1'),
  kind: z.literal('ClusterRole'),
  metadata: z.looseObject({ name: z.string() }),
});

/**
 * One control plane for the run (kube-controller-manager on: Cluster API relies on the garbage collector), Tally's,
 * Sim's and all of Cluster API's CRDs, the real Cluster API manager with its webhooks and conversion, then the two
 * built apps — the Tally IPAM controller and the Sim infrastructure controller — as processes with `--kubeconfig`, each
 * with its admission webhook server (a throwaway serving certificate for 127.0.0.1) registered with the API server
 * from the app's own shipped `config/webhook` manifests; ready once a dry-run request went through every webhook.
 * With TALLY_TEST_KUBECONFIG (a kind cluster after `clusterctl init`) no control plane or manager is started: Cluster
 * API must already run there, Sim's aggregated ClusterRole is applied so its pod may manage the Sim kinds, and the two
 * apps still run here, against that cluster, without webhooks: an API server in a kind node container cannot call
 * 127.0.0.1 of this machine (see the README).
 */
const base = createGlobalSetup({
  controllerManager: true,
  crds: [tallyCRDDirectory(), simCRDDirectory()],
  capiManager: { verbosity: 4 },
});

const setup: GlobalSetup = async (project) => {
  const setupStart = performance.now();
  const teardownBase = await base(project);
  const baseReady = performance.now();
  const provided = project.getProvidedContext().tallyTestEnv;
  const started: StartedApp[] = [];
  const certDirs: ServingCertDir[] = [];
  const registered: RegisteredWebhookConfiguration[] = [];
  const kc = new KubeConfig();
  kc.loadFromString(provided.kubeconfigYaml);
  const teardown = async (): Promise<void> => {
    try {
      // failurePolicy Fail: with its server gone a configuration would refuse every write of its kinds.
      await unregisterWebhooks(kc, registered);
      await Promise.all(started.map((app) => app.process.stop()));
      await Promise.all(certDirs.map((dir) => dir.remove()));
    } finally {
      await teardownBase();
    }
  };
  try {
    if (provided.external) {
      const role = ClusterRole.parse(loadYaml<unknown>(readFileSync(SIM_CAPI_ROLE, 'utf8')));
      await KubernetesObjectApi.makeApiClient(kc).patch(
        role,
        undefined,
        undefined,
        'tally-e2e',
        true,
        PatchStrategy.ServerSideApply,
      );
    }
    // An API server in a container (kind) cannot reach this machine's loopback: webhooks only on a local plane.
    const withWebhooks = !provided.external;
    const start = async (app: AppKey): Promise<StartedApp> => {
      const certs = withWebhooks ? await createServingCertDir(`tally-e2e-${APPS[app].name}-webhook`) : undefined;
      if (certs) certDirs.push(certs);
      const running = await startApp(app, provided.kubeconfigPath, certs ? { webhookCertDir: certs.path } : {});
      started.push(running);
      if (certs) {
        if (!running.webhooks) throw new Error(`${APPS[app].name} was started without its webhook server`);
        registered.push(...(await registerAppWebhooks(kc, app, running.webhooks, certs.caPem)));
      }
      return running;
    };
    const [ipam, sim] = await Promise.all([start('ipam'), start('sim')]);
    const appsReady = performance.now();
    if (withWebhooks) await awaitWebhooksAnswer(kc, ['ipam', 'sim']);
    const seconds = (from: number, to: number): string => `${((to - from) / 1000).toFixed(1)} s`;
    const webhooksReady = performance.now();
    console.error(
      `[tally-e2e] control plane, CRDs and Cluster API ready in ${seconds(setupStart, baseReady)}; both apps ready (webhooks ` +
        `registered) in ${seconds(baseReady, appsReady)} more; ` +
        (withWebhooks
          ? `their ${registered.length} webhook configurations answering in ${seconds(appsReady, webhooksReady)} more `
          : 'webhooks off (external cluster) ') +
        `(ipam-controller log: ${ipam.process.logPath}; sim-infra-controller log: ${sim.process.logPath})`,
    );
    project.provide(APPS_PROVIDE_KEY, {
      ipam: { kind: 'process', pid: ipam.process.pid, logPath: ipam.process.logPath },
      sim: { kind: 'process', pid: sim.process.pid, logPath: sim.process.logPath },
    });
    project.provide(WEBHOOKS_PROVIDE_KEY, withWebhooks);
    // The suite's IPAM controller runs without --enable-metal3-ipam: metal3.test.ts starts its own.
    project.provide(METAL3_PROVIDE_KEY, false);
  } catch (error) {
    await teardown();
    throw error;
  }
  return teardown;
};

export default setup;
