/** Waiting for what the lane installed to serve, and keeping the Pods' logs when the cluster goes. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppsV1Api, CoreV1Api, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { waitFor } from '@tally-ipam/testenv';

/**
 * Resolves when the Deployment's rollout is complete: observed its generation, every replica updated and available
 * (readiness probes passing). The deadline only bounds a hang; the error names the Pods' states.
 */
export async function awaitRollout(
  kc: KubeConfig,
  namespace: string,
  name: string,
  timeoutMs = 300_000,
): Promise<void> {
  const apps = kc.makeApiClient(AppsV1Api);
  const core = kc.makeApiClient(CoreV1Api);
  let last = 'not read yet';
  await waitFor(
    `Deployment ${namespace}/${name} to roll out`,
    async () => {
      const deployment = await apps.readNamespacedDeployment({ namespace, name });
      const wanted = deployment.spec?.replicas ?? 1;
      const status = deployment.status;
      last = `generation ${deployment.metadata?.generation} observed ${status?.observedGeneration}, replicas ${wanted}, updated ${status?.updatedReplicas ?? 0}, available ${status?.availableReplicas ?? 0}`;
      const done =
        (status?.observedGeneration ?? 0) >= (deployment.metadata?.generation ?? 0) &&
        status?.updatedReplicas === wanted &&
        status?.availableReplicas === wanted &&
        (status?.replicas ?? 0) === wanted;
      return done ? true : undefined;
    },
    {
      timeoutMs,
      intervalMs: 1_000,
      describe: async () => {
        const selector = Object.entries(
          (await apps.readNamespacedDeployment({ namespace, name })).spec?.selector.matchLabels ?? {},
        )
          .map(([key, value]) => `${key}=${value}`)
          .join(',');
        const pods = await core.listNamespacedPod({ namespace, labelSelector: selector });
        const states = pods.items.map((pod) =>
          [
            pod.metadata?.name,
            pod.status?.phase,
            ...(pod.status?.containerStatuses ?? []).map(
              (c) =>
                `${c.name} ready=${c.ready} restarts=${c.restartCount} ${JSON.stringify(c.state?.waiting ?? c.state?.terminated ?? {})}`,
            ),
          ].join(' '),
        );
        return `${last}; pods: ${states.join(' | ') || 'none'}`;
      },
    },
  );
}

/**
 * Resolves when Cluster API's webhooks answer through their Service: a dry-run v1beta1 `Cluster` goes through
 * conversion (v1beta1 → the v1beta2 storage version), defaulting and validation.
 */
export async function awaitCapiWebhooks(kc: KubeConfig, timeoutMs = 180_000): Promise<void> {
  const api = kc.makeApiClient(CustomObjectsApi);
  let last = 'no answer yet';
  await waitFor(
    "a dry-run v1beta1 Cluster to pass Cluster API's conversion and admission webhooks",
    async () => {
      try {
        await api.createNamespacedCustomObject({
          group: 'cluster.x-k8s.io',
          version: 'v1beta1',
          plural: 'clusters',
          namespace: 'default',
          body: {
            apiVersion: 'cluster.x-k8s.io/v1beta1',
            kind: 'Cluster',
            metadata: { name: 'lane-probe' },
            // Cluster API refuses a Cluster without an infrastructure, control plane or topology reference.
            spec: {
              infrastructureRef: {
                apiVersion: 'infrastructure.cluster.x-k8s.io/v1alpha1',
                kind: 'SimCluster',
                name: 'lane-probe',
              },
            },
          },
          dryRun: 'All',
        });
        return true;
      } catch (error) {
        last = error instanceof Error ? error.message.slice(0, 500) : String(error);
        return undefined;
      }
    },
    { timeoutMs, intervalMs: 1_000, describe: () => last },
  );
}

/** Writes every container log (current and previous instance) of the namespaces' Pods into `dir`. */
export async function savePodLogs(kc: KubeConfig, namespaces: readonly string[], dir: string): Promise<void> {
  const core = kc.makeApiClient(CoreV1Api);
  mkdirSync(dir, { recursive: true });
  for (const namespace of namespaces) {
    const pods = await core.listNamespacedPod({ namespace });
    for (const pod of pods.items) {
      const name = pod.metadata?.name ?? '';
      for (const container of pod.spec?.containers ?? []) {
        for (const previous of [false, true]) {
          try {
            const log = await core.readNamespacedPodLog({ namespace, name, container: container.name, previous });
            writeFileSync(join(dir, `${namespace}_${name}_${container.name}${previous ? '.previous' : ''}.log`), log);
          } catch {
            // No previous instance (never restarted), or the container never started.
          }
        }
      }
    }
  }
}

/** Kubelet and node Event reasons that say a container was unwell, restarted or killed. */
const UNWELL_REASONS = ['Unhealthy', 'BackOff', 'Killing', 'OOMKilling', 'Evicted', 'NodeNotReady'] as const;

/**
 * What went wrong with the cluster's containers during the lane, for the run's summary (a failed test on a busy
 * machine is explained by a restarted webhook Pod or a probe that timed out, which no test's message says): every
 * container that restarted (its last end's reason and exit code) and the kubelet's Events about unwell containers,
 * aggregated by object and reason. Events are the only record of Pods the tests deleted since.
 */
export async function clusterHealth(kc: KubeConfig): Promise<{ restarts: string[]; events: string[] }> {
  const core = kc.makeApiClient(CoreV1Api);
  const pods = await core.listPodForAllNamespaces();
  const restarts = pods.items.flatMap((pod) =>
    (pod.status?.containerStatuses ?? [])
      .filter((c) => c.restartCount > 0)
      .map((c) => {
        const last = c.lastState?.terminated;
        const ended = last ? `${last.reason ?? 'ended'} (exit ${last.exitCode})` : 'unknown';
        return `${pod.metadata?.namespace}/${pod.metadata?.name} ${c.name}: ${c.restartCount} restart(s), last ${ended}`;
      }),
  );
  const counts = new Map<string, { count: number; message: string }>();
  for (const reason of UNWELL_REASONS) {
    const events = await core.listEventForAllNamespaces({ fieldSelector: `reason=${reason}` });
    for (const event of events.items) {
      // A Pod deleted by a test or a rollout is killed with "Stopping container …": expected, not a sign of trouble
      // (a probe's kill says "failed liveness probe, will be restarted").
      if (reason === 'Killing' && (event.message ?? '').startsWith('Stopping container')) continue;
      const object = event.involvedObject;
      const key = `${object.namespace ?? ''}/${object.name ?? ''} ${reason}`;
      const seen = counts.get(key) ?? { count: 0, message: (event.message ?? '').slice(0, 120) };
      seen.count += event.count ?? 1;
      counts.set(key, seen);
    }
  }
  const events = [...counts].map(([key, { count, message }]) => `${key} ×${count}: ${message}`);
  return { restarts, events };
}
