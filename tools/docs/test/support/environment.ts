import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { metal3CRDDirectory } from '@tally-ipam/api-types';
import { simCRDDirectory } from '@tally-ipam/sim-infra';
import {
  createServingCertDir,
  parseWebhookConfigurations,
  registerLoopbackWebhooks,
  type ServingCertDir,
  waitFor,
} from '@tally-ipam/testenv';
import { createGlobalSetup, type GlobalSetup } from '@tally-ipam/testenv/vitest';
import { DEFAULT_CAPV_VERSION, installCapvCRDs } from '@tally-ipam/vsphere';
import { stringify } from 'yaml';
import { type Clusterctl, prepareClusterctl, runClusterctl } from './clusterctl.js';
import { managerContainer, readComponents } from './components.js';
import { type StartedController, startController } from './controller.js';
import { ApiError, Kube } from './kube.js';

/** What the global setup hands the test files (plain data: it crosses vitest's `provide`). */
export interface ProvidedGuide {
  readonly clusterctl: Clusterctl;
  /** The components as `clusterctl generate provider --ipam tally` writes them, with the Metal3 API on. */
  readonly componentsPath: string;
  readonly controllerLog: string;
  readonly controllerArgs: readonly string[];
  /** The controller's `/metrics` (HTTPS, TokenReview and SubjectAccessReview, as shipped). */
  readonly diagnosticsPort: number;
}

export const GUIDE_PROVIDE_KEY = 'tallyGuide';
export const FIELD_MANAGER = 'tally-guide';
export const PROVIDER_NAMESPACE = 'tally-system';

declare module 'vitest' {
  export interface ProvidedContext {
    tallyGuide: ProvidedGuide;
  }
}

/** The components' objects this plane needs besides CRDs; no Deployment (nothing would run it) and no cert-manager. */
const INSTALLED_KINDS = new Set([
  'Namespace',
  'ServiceAccount',
  'Role',
  'RoleBinding',
  'ClusterRole',
  'ClusterRoleBinding',
]);

/** Waits until the API server calls the pool webhook: only it refuses a reservation outside the pool's addresses. */
async function awaitPoolWebhook(kube: Kube): Promise<void> {
  const probe = {
    apiVersion: 'ipam.cluster.x-k8s.io/v1alpha1',
    kind: 'TallyIPPool',
    metadata: { name: 'webhook-probe', namespace: 'default' },
    spec: { addresses: ['192.0.2.0/28'], prefix: 24, reservations: [{ claimName: 'probe', address: '192.0.2.99' }] },
  };
  const path = `${await kube.path({ apiVersion: probe.apiVersion, kind: probe.kind })}?dryRun=All`;
  await waitFor(
    'the pool admission webhook to answer',
    async () => {
      try {
        await kube.request('POST', path, probe);
        return false;
      } catch (error) {
        return error instanceof ApiError && error.status === 422 && error.message.includes("is not in the pool's");
      }
    },
    { timeoutMs: 120_000, intervalMs: 250 },
  );
}

/**
 * One control plane and one controller for the whole project: the components rendered by clusterctl from the
 * release's repository (their CRDs installed before kube-controller-manager starts, their RBAC applied), Metal3's,
 * Sim's, CAPV's and Cluster API's IPAM and core CRDs, the built controller started with the shipped Deployment's
 * arguments, and the shipped webhook configuration registered in url mode with a throwaway CA.
 */
export function guideGlobalSetup(): GlobalSetup {
  return async (project) => {
    const work = mkdtempSync(join(tmpdir(), 'tally-guide-'));
    const cleanups: (() => Promise<void> | void)[] = [() => rmSync(work, { recursive: true, force: true })];
    const teardown = async (): Promise<void> => {
      for (const cleanup of cleanups.reverse()) await cleanup();
    };
    try {
      const clusterctl = await prepareClusterctl(work);
      const componentsPath = join(work, 'ipam-components.yaml');
      const generated = runClusterctl(
        clusterctl,
        ['generate', 'provider', '--ipam', 'tally', '--write-to', componentsPath, '--config', clusterctl.configPath],
        { TALLY_IPAM_ENABLE_METAL3: 'true' },
      );
      if (generated.status !== 0) throw new Error(`clusterctl generate provider failed: ${generated.output}`);
      const components = readComponents(componentsPath);
      const crdDir = join(work, 'crds');
      mkdirSync(crdDir);
      for (const crd of components.filter((object) => object.kind === 'CustomResourceDefinition')) {
        writeFileSync(join(crdDir, `${crd.metadata.name}.yaml`), stringify(crd));
      }
      const base = createGlobalSetup({
        crds: [crdDir, metal3CRDDirectory(), simCRDDirectory()],
        capiCRDs: ['ipam.cluster.x-k8s.io', 'cluster.x-k8s.io'],
        controllerManager: true,
        // Its own plane even when TALLY_TEST_KUBECONFIG names a cluster: the guide's objects and a second controller
        // must not land in a cluster whose own Tally would answer them.
        ignoreTestKubeconfig: true,
      });
      cleanups.push(await base(project));
      const provided = project.getProvidedContext().tallyTestEnv;
      const kubeConfig = new KubeConfig();
      kubeConfig.loadFromString(provided.kubeconfigYaml);
      await installCapvCRDs(kubeConfig, DEFAULT_CAPV_VERSION);
      const kube = new Kube(kubeConfig);
      for (const object of components.filter((candidate) => INSTALLED_KINDS.has(candidate.kind))) {
        await kube.apply(object, FIELD_MANAGER);
      }
      const certs: ServingCertDir = await createServingCertDir('tally-guide-webhook');
      cleanups.push(() => certs.remove());
      const controller: StartedController = await startController(
        provided.kubeconfigPath,
        managerContainer(components).args,
        { webhookCertDir: certs.path, leaseNamespace: PROVIDER_NAMESPACE, deadlineMs: 180_000 },
      );
      cleanups.push(() => controller.process.stop());
      for (const configuration of parseWebhookConfigurations(readFileSync(componentsPath, 'utf8'), componentsPath)) {
        await registerLoopbackWebhooks(
          kubeConfig,
          configuration,
          { port: controller.webhookPort, caPem: certs.caPem },
          { fieldManager: FIELD_MANAGER },
        );
      }
      await awaitPoolWebhook(kube);
      console.error(`[tally-guide] controller log: ${controller.process.logPath}`);
      project.provide(GUIDE_PROVIDE_KEY, {
        clusterctl,
        componentsPath,
        controllerLog: controller.process.logPath,
        controllerArgs: controller.args,
        diagnosticsPort: controller.diagnosticsPort,
      });
    } catch (error) {
      await teardown();
      throw error;
    }
    return teardown;
  };
}
