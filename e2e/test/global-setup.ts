import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { KubeConfig, KubernetesObjectApi, loadYaml, PatchStrategy } from '@kubernetes/client-node';
import { tallyCRDDirectory } from '@tally-ipam/api-types';
import { simCRDDirectory } from '@tally-ipam/sim-infra';
import type { WatchedProcess } from '@tally-ipam/testenv';
import { createGlobalSetup, type GlobalSetup } from '@tally-ipam/testenv/vitest';
import { z } from 'zod';
import { APPS_PROVIDE_KEY, startApp } from './apps.js';

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
 * built apps — the Tally IPAM controller and the Sim infrastructure controller — as processes with `--kubeconfig`.
 * With TALLY_TEST_KUBECONFIG (a kind cluster after `clusterctl init`) no control plane or manager is started: Cluster
 * API must already run there, Sim's aggregated ClusterRole is applied so its pod may manage the Sim kinds, and the two
 * apps still run here, against that cluster.
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
  const started: WatchedProcess[] = [];
  const teardown = async (): Promise<void> => {
    try {
      await Promise.all(started.map((app) => app.stop()));
    } finally {
      await teardownBase();
    }
  };
  try {
    if (provided.external) {
      const kc = new KubeConfig();
      kc.loadFromString(provided.kubeconfigYaml);
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
    const starting = [startApp('ipam', provided.kubeconfigPath), startApp('sim', provided.kubeconfigPath)] as const;
    // Every app that did start is stopped again, even when the other failed.
    for (const outcome of await Promise.allSettled(starting)) {
      if (outcome.status === 'fulfilled') started.push(outcome.value);
    }
    const [ipam, sim] = await Promise.all(starting);
    const seconds = (from: number, to: number): string => `${((to - from) / 1000).toFixed(1)} s`;
    const appsReady = performance.now();
    console.error(
      `[tally-e2e] control plane, CRDs and Cluster API ready in ${seconds(setupStart, baseReady)}; both apps ready ` +
        `in ${seconds(baseReady, appsReady)} more (ipam-controller log: ${ipam.logPath}; sim-infra-controller log: ` +
        `${sim.logPath})`,
    );
    project.provide(APPS_PROVIDE_KEY, {
      ipam: { pid: ipam.pid, logPath: ipam.logPath },
      sim: { pid: sim.pid, logPath: sim.logPath },
    });
  } catch (error) {
    await teardown();
    throw error;
  }
  return teardown;
};

export default setup;
