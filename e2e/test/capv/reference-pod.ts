/**
 * The reference in-cluster IPAM provider as a Deployment on the kind lane (issue 32, item 4), installed the way its
 * users would where there is no cert-manager: its pool CRDs as the module ships them, its own namespace, a
 * ServiceAccount bound to the ClusterRole of the module's `config/rbac/role.yaml` (the rules its controllers were
 * generated with, not restated here), and one replica of the lane's image with the flags of the local run
 * (`REFERENCE_RUN_FLAGS`: no webhooks, so no certificate; no leader election, so no Lease rules), in-cluster config.
 * Everything, CRDs included, is deleted again afterwards: its pool kinds must not stay in the lane's cluster for the
 * files that run after this one.
 */
import { readdir, readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { Client, isNotFound, type ResourceKind } from '@tally-ipam/controller-kit/client';
import { applyManifests, type Manifest, parseManifests, resourceKindOf } from '@tally-ipam/ship';
import { downloadGoModule, installCRDs, waitFor } from '@tally-ipam/testenv';
import {
  REFERENCE_CONTROLLER_COUNT,
  REFERENCE_MODULE,
  REFERENCE_RUN_FLAGS,
  startedControllers,
} from '@tally-ipam/vsphere';
import { z } from 'zod';
import { LANE_LOG_DIR } from '../../kind/lane/lane.js';
import type { ProvidedLaneCluster } from '../../kind/lane/provided.js';
import { onLaneNodes } from '../../kind/lane/providers.js';
import type { LaneReferenceIpam } from '../../kind/lane/reference.js';
import { savePodLogs } from '../../kind/lane/rollout.js';
import { podLogs } from './in-cluster.js';
import { type IpamProviderUnderTest, referenceProvider } from './providers.js';

/** The names its release manifests give (`config/default`: namespace, name prefix and common label). */
const NAMESPACE = 'capi-ipam-in-cluster-system';
const PREFIX = 'capi-ipam-in-cluster-';
const LABELS = { 'cluster.x-k8s.io/provider': 'ipam-in-cluster', 'control-plane': 'controller-manager' } as const;
const POD_SELECTOR = Object.entries(LABELS)
  .map(([key, value]) => `${key}=${value}`)
  .join(',');
const FIELD_MANAGER = 'tally-e2e';
const CRD_RESOURCE: ResourceKind = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  plural: 'customresourcedefinitions',
  namespaced: false,
};

const NAMESPACE_RESOURCE: ResourceKind = {
  apiVersion: 'v1',
  kind: 'Namespace',
  plural: 'namespaces',
  namespaced: false,
};

const PolicyRule = z.object({
  apiGroups: z.array(z.string()),
  resources: z.array(z.string()),
  verbs: z.array(z.string()).min(1),
});
const ManagerRole = z.object({ kind: z.literal('ClusterRole'), rules: z.array(PolicyRule).min(1) });
type PolicyRule = z.infer<typeof PolicyRule>;

/** The rules of the ClusterRole the module generates for its manager (`config/rbac/role.yaml`). */
async function managerRules(version: string): Promise<PolicyRule[]> {
  const file = join(await downloadGoModule(REFERENCE_MODULE, version), 'config/rbac/role.yaml');
  const [role, ...others] = parseManifests(await readFile(file, 'utf8'), file);
  if (!role || others.length > 0) throw new Error(`${file}: expected one ClusterRole, found ${others.length + 1}`);
  const parsed = ManagerRole.safeParse(role);
  if (!parsed.success) throw new Error(`${file}: not the manager's ClusterRole: ${parsed.error.message.slice(0, 500)}`);
  return parsed.data.rules;
}

/** The names of the CRDs in `crdDir` (the files the lane's image came with). */
async function crdNames(crdDir: string): Promise<string[]> {
  const files = (await readdir(crdDir)).filter((name) => ['.yaml', '.yml'].includes(extname(name))).sort();
  const names: string[] = [];
  for (const name of files) {
    const file = join(crdDir, name);
    for (const manifest of parseManifests(await readFile(file, 'utf8'), file)) {
      if (manifest.kind === 'CustomResourceDefinition') names.push(manifest.metadata.name);
    }
  }
  if (names.length === 0) throw new Error(`no CustomResourceDefinition in ${crdDir}`);
  return names;
}

/** Namespace, ServiceAccount, ClusterRole and its binding, the Deployment: in install order. */
function referenceObjects(
  reference: LaneReferenceIpam,
  rules: readonly PolicyRule[],
  nodes: readonly string[],
): Manifest[] {
  const serviceAccount = `${PREFIX}controller-manager`;
  const role = `${PREFIX}manager-role`;
  const labels = { ...LABELS };
  const deployment: Manifest = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: `${PREFIX}controller-manager`, namespace: NAMESPACE, labels },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          serviceAccountName: serviceAccount,
          terminationGracePeriodSeconds: 10,
          securityContext: { runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } },
          containers: [
            {
              name: 'manager',
              image: reference.image,
              imagePullPolicy: 'Never',
              command: ['/manager'],
              args: [...REFERENCE_RUN_FLAGS],
              // Its release's values (`config/manager/manager.yaml`).
              resources: { limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: '10m', memory: '64Mi' } },
              securityContext: {
                allowPrivilegeEscalation: false,
                capabilities: { drop: ['ALL'] },
                runAsUser: 65532,
                runAsGroup: 65532,
              },
            },
          ],
        },
      },
    },
  };
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE, labels } },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: serviceAccount, namespace: NAMESPACE, labels } },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: role, labels }, rules },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: `${PREFIX}manager-rolebinding`, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
      subjects: [{ kind: 'ServiceAccount', name: serviceAccount, namespace: NAMESPACE }],
    },
    // Pinned like the lane's own Deployments: Sim's Nodes have no kubelet behind them.
    ...onLaneNodes([deployment], nodes),
  ];
}

/** Whether the object still exists (a 404 is the answer "no"; any other error is thrown). */
async function exists(
  client: Client,
  resource: ResourceKind,
  key: { namespace?: string; name: string },
): Promise<boolean> {
  try {
    await client.get(resource, key);
    return true;
  } catch (error) {
    if (isNotFound(error)) return false;
    throw error;
  }
}

/** A delete of something already gone is done; anything else is thrown. */
function unlessNotFound(error: unknown): void {
  if (!isNotFound(error)) throw error;
}

async function podStates(core: CoreV1Api): Promise<string> {
  const pods = await core.listNamespacedPod({ namespace: NAMESPACE, labelSelector: POD_SELECTOR });
  const states = pods.items.map((pod) =>
    [
      pod.metadata?.name,
      pod.status?.phase,
      ...(pod.status?.containerStatuses ?? []).map(
        (c) => `restarts=${c.restartCount} ${JSON.stringify(c.state?.waiting ?? c.state?.terminated ?? {})}`,
      ),
    ].join(' '),
  );
  return states.join(' | ') || 'no Pod';
}

export interface RunningReferencePod {
  readonly provider: IpamProviderUnderTest;
  /**
   * Stops the provider as `clusterctl delete --ipam in-cluster` without `--include-crd` would: its Deployment goes
   * (its Pod's log kept first), its CRDs and every pool, claim and IPAddress stay. Resolves once no Pod of it is left.
   */
  halt(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Installs the reference provider on the lane's cluster and resolves once its Pod's log shows every controller's
 * workers started; `halt` stops it and keeps its CRDs (a take-over); `stop` deletes every object it installed (the
 * CRDs first, while it still runs to release its pools' finalizers — or, after `halt`, once whoever took over released
 * them) after keeping its Pod's log in the lane's log directory.
 */
export async function startReferencePod(
  kc: KubeConfig,
  lane: ProvidedLaneCluster,
  reference: LaneReferenceIpam,
  log: (line: string) => void,
  net?: number,
): Promise<RunningReferencePod> {
  const started = Date.now();
  const client = new Client(kc, { fieldManager: FIELD_MANAGER });
  const core = kc.makeApiClient(CoreV1Api);
  const objects = referenceObjects(reference, await managerRules(reference.version), lane.nodes);
  const crds = await crdNames(reference.crdDir);
  const stop = async (): Promise<void> => {
    await savePodLogs(kc, [NAMESPACE], LANE_LOG_DIR).catch((error: unknown) =>
      log(`the reference provider's Pod log could not be saved: ${String(error).slice(0, 300)}`),
    );
    try {
      for (const name of crds) await client.delete(CRD_RESOURCE, { name }).catch(unlessNotFound);
      let left = crds;
      await waitFor(
        `the reference provider's CRDs ${crds.join(', ')} to be deleted`,
        async () => {
          const present = await Promise.all(left.map((name) => exists(client, CRD_RESOURCE, { name })));
          left = left.filter((_, index) => present[index]);
          return left.length === 0;
        },
        {
          timeoutMs: 180_000,
          intervalMs: 500,
          describe: async () => `left: ${left.join(', ')}; its Pod: ${await podStates(core)}`,
        },
      );
    } finally {
      for (const manifest of [...objects].reverse()) {
        const resource = await resourceKindOf(kc, manifest);
        const key = { namespace: manifest.metadata.namespace, name: manifest.metadata.name };
        await client.delete(resource, key).catch(unlessNotFound);
      }
      await waitFor(
        `the namespace ${NAMESPACE} to be deleted`,
        async () => !(await exists(client, NAMESPACE_RESOURCE, { name: NAMESPACE })),
        { timeoutMs: 180_000, intervalMs: 500 },
      );
      client.close();
    }
  };
  const logs = podLogs(kc, NAMESPACE, POD_SELECTOR, started);
  try {
    await installCRDs(kc, [reference.crdDir]);
    await applyManifests(kc, objects, FIELD_MANAGER);
    let count = 0;
    await waitFor(
      `the reference provider's Pod to log "Starting workers" for its ${REFERENCE_CONTROLLER_COUNT} controllers`,
      async () => {
        count = startedControllers(await logs.read());
        return count >= REFERENCE_CONTROLLER_COUNT;
      },
      {
        timeoutMs: 180_000,
        intervalMs: 1_000,
        describe: async () => `${count} started; ${await podStates(core)}`,
        hint: logs.hint,
      },
    );
  } catch (error) {
    await stop().catch((cleanup: unknown) => log(`removing the reference provider failed too: ${String(cleanup)}`));
    throw error;
  }
  const halt = async (): Promise<void> => {
    await savePodLogs(kc, [NAMESPACE], LANE_LOG_DIR);
    const [deployment] = objects.filter((manifest) => manifest.kind === 'Deployment');
    if (!deployment) throw new Error("the reference provider's objects have no Deployment");
    const resource = await resourceKindOf(kc, deployment);
    await client
      .delete(resource, { namespace: NAMESPACE, name: deployment.metadata.name }, { propagationPolicy: 'Background' })
      .catch(unlessNotFound);
    await waitFor(
      "the reference provider's Pod to be gone (its Deployment deleted)",
      async () =>
        (await core.listNamespacedPod({ namespace: NAMESPACE, labelSelector: POD_SELECTOR })).items.length === 0,
      { timeoutMs: 180_000, intervalMs: 500, describe: () => podStates(core) },
    );
  };
  log(
    `reference provider ${reference.version} as a Pod: all controllers started in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
  return {
    provider: referenceProvider(
      {
        version: reference.version,
        log: { hint: `${logs.hint} (kept in ${LANE_LOG_DIR} once the test is done)`, read: logs.read },
      },
      net,
    ),
    halt,
    stop,
  };
}
