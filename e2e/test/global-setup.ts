import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { KubeConfig, KubernetesObjectApi, loadYaml, PatchStrategy } from '@kubernetes/client-node';
import { tallyCRDDirectory } from '@tally-ipam/api-types';
import { createGlobalSetup, type GlobalSetup } from '@tally-ipam/testenv/vitest';
import { z } from 'zod';

const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

/**
 * One control plane for the run (kube-controller-manager on: Cluster API relies on the garbage collector), Tally's
 * CRDs, the harness InfraCluster CRD, all of Cluster API's CRDs and the real Cluster API manager with its webhooks
 * and conversion. With TALLY_TEST_KUBECONFIG (a kind cluster after `clusterctl init`), nothing is started: Cluster
 * API must already run there, and only the RBAC its pod needs for the harness kind is added.
 */
const base = createGlobalSetup({
  controllerManager: true,
  crds: [tallyCRDDirectory(), fixture('harness-infra.crd.yaml')],
  capiManager: { verbosity: 4 },
});

const setup: GlobalSetup = async (project) => {
  const teardown = await base(project);
  const provided = project.getProvidedContext().tallyTestEnv;
  if (provided.external) {
    const kc = new KubeConfig();
    kc.loadFromString(provided.kubeconfigYaml);
    const role = z
      .looseObject({
        apiVersion: z.literal('rbac.authorization.k8s.io/v1'),
        kind: z.literal('ClusterRole'),
        metadata: z.looseObject({ name: z.string() }),
      })
      .parse(loadYaml<unknown>(readFileSync(fixture('harness-rbac.yaml'), 'utf8')));
    await KubernetesObjectApi.makeApiClient(kc).patch(
      role,
      undefined,
      undefined,
      'tally-e2e',
      true,
      PatchStrategy.ServerSideApply,
    );
  }
  return teardown;
};

export default setup;
