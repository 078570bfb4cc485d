/**
 * The CAPV scenario on the kind lane (issue 32, item 4): CAPV installed by `clusterctl init --infrastructure vsphere`
 * from the lane's repository (its release's components, the image built here), a vCenter simulator per run as a Pod
 * with a Service, and the providers' logs read from their Pods. CAPV reaches the simulator through the Service; this
 * process reaches the simulator's inspection endpoint (plain HTTP, loopback in its Pod) through `kubectl port-forward`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { waitFor } from '@tally-ipam/testenv';
import { capvWebhooksAnswer, type VcsimEndpoint, VcsimReadyLine, VcsimVm } from '@tally-ipam/vsphere';
import { z } from 'zod';
import { type LaneCapv, VCSIM_PORTS } from '../../kind/lane/capv.js';
import type { ProvidedLaneCluster } from '../../kind/lane/provided.js';
import { awaitRollout } from '../../kind/lane/rollout.js';
import { clusterctlWithConfig, expectSuccess } from '../lifecycle/clusterctl.js';
import type { ProviderLog } from './providers.js';

/** Installs CAPV on the lane's cluster the way a user adds a provider; resolves once its webhooks answer. */
export async function installCapvOnLane(
  lane: ProvidedLaneCluster,
  capv: LaneCapv,
  kc: KubeConfig,
  log: (line: string) => void,
): Promise<{ durationMs: number }> {
  const started = performance.now();
  const clusterctl = clusterctlWithConfig(lane.clusterctl);
  const init = expectSuccess(
    await clusterctl.run(['init', '--kubeconfig', lane.kubeconfigPath, '--infrastructure', capv.infrastructure]),
  );
  log(`clusterctl init --infrastructure ${capv.infrastructure} took ${(init.durationMs / 1000).toFixed(1)} s`);
  await awaitRollout(kc, capv.namespace, capv.deployment);
  let last = 'not asked yet';
  await waitFor(
    "CAPV's webhooks to answer through their Service",
    async () => {
      try {
        return (await capvWebhooksAnswer(kc)) ? true : undefined;
      } catch (error) {
        last = error instanceof Error ? error.message.slice(0, 500) : String(error);
        return undefined;
      }
    },
    { timeoutMs: 180_000, intervalMs: 1_000, describe: () => last },
  );
  return { durationMs: performance.now() - started };
}

/** The logs of the Pods of `selector` since `since` (bounded: a busy controller's whole log would be large). */
export function podLogs(kc: KubeConfig, namespace: string, selector: string, since: number): ProviderLog {
  const core = kc.makeApiClient(CoreV1Api);
  return {
    hint: `kubectl -n ${namespace} logs -l ${selector} --prefix --tail=-1`,
    read: async () => {
      const sinceSeconds = Math.ceil((Date.now() - since) / 1000) + 60;
      const pods = await core.listNamespacedPod({ namespace, labelSelector: selector });
      const logs = await Promise.all(
        pods.items.map((pod) =>
          core
            .readNamespacedPodLog({ namespace, name: pod.metadata?.name ?? '', sinceSeconds })
            .then(String)
            .catch(() => ''),
        ),
      );
      return logs.join('\n');
    },
  };
}

const PortForwardLine = /Forwarding from 127\.0\.0\.1:(\d+) -> \d+/;

/** `kubectl port-forward` to a loopback port in a Pod: the local port it listens on (loopback too), and its stop. */
async function portForward(
  capv: LaneCapv,
  kubeconfigPath: string,
  namespace: string,
  pod: string,
  port: number,
): Promise<{ port: number; child: ChildProcess }> {
  const child = spawn(
    capv.kubectl,
    ['--kubeconfig', kubeconfigPath, '-n', namespace, 'port-forward', '--address=127.0.0.1', `pod/${pod}`, `:${port}`],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const local = await new Promise<number>((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      output = (output + chunk.toString('utf8')).slice(-4_000);
      const match = PortForwardLine.exec(output);
      if (match?.[1]) resolve(Number(match[1]));
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`kubectl port-forward exited with ${code}: ${output.slice(-500)}`)));
    child.once('error', reject);
  });
  return { port: local, child };
}

/** The simulator's Pod, Secret and Service in the scenario's namespace (deleted with it). */
function vcsimObjects(
  capv: LaneCapv,
  namespace: string,
  node: string,
): { secret: object; pod: object; service: object } {
  const labels = { 'app.kubernetes.io/name': 'tally-vcsim' };
  const securityContext = {
    allowPrivilegeEscalation: false,
    capabilities: { drop: ['ALL'] },
    runAsNonRoot: true,
    runAsUser: 65532,
    readOnlyRootFilesystem: false,
  };
  return {
    secret: {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'vcsim-credentials', namespace },
      stringData: { password: capv.credentials.password },
    },
    pod: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'vcsim', namespace, labels },
      spec: {
        // The lane's own node: Sim registers Nodes with no kubelet behind them (lane/providers.ts onLaneNodes).
        nodeSelector: { 'kubernetes.io/hostname': node },
        restartPolicy: 'Never',
        containers: [
          {
            name: 'vcsim',
            image: capv.vcsimImage,
            imagePullPolicy: 'Never',
            args: [
              `--listen=127.0.0.1:${VCSIM_PORTS.api}`,
              `--inspect-listen=127.0.0.1:${VCSIM_PORTS.inspect}`,
              `--username=${capv.credentials.username}`,
              '--tmpdir=/tmp/datastore',
            ],
            env: [
              { name: 'VCSIM_PASSWORD', valueFrom: { secretKeyRef: { name: 'vcsim-credentials', key: 'password' } } },
            ],
            securityContext,
          },
          {
            // The simulator listens on loopback only; CAPV's Pod reaches it through this forwarder and the Service.
            name: 'forward',
            image: capv.vcsimImage,
            imagePullPolicy: 'Never',
            command: ['/forward'],
            args: [`--listen=:${VCSIM_PORTS.forward}`, `--to=127.0.0.1:${VCSIM_PORTS.api}`],
            ports: [{ name: 'vcenter', containerPort: VCSIM_PORTS.forward }],
            securityContext,
          },
        ],
      },
    },
    service: {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'vcsim', namespace },
      spec: { selector: labels, ports: [{ name: 'vcenter', port: VCSIM_PORTS.service, targetPort: 'vcenter' }] },
    },
  };
}

/**
 * Starts a simulator Pod in `namespace` and resolves once it wrote its ready line (its container log): the endpoint
 * CAPV is given is the Service (`vcsim.<namespace>.svc:443`), with the thumbprint of the certificate it made.
 */
export async function startVcsimPod(
  kc: KubeConfig,
  lane: ProvidedLaneCluster,
  capv: LaneCapv,
  namespace: string,
): Promise<VcsimEndpoint & { readonly hint: string }> {
  const core = kc.makeApiClient(CoreV1Api);
  const node = lane.nodes[0];
  if (!node) throw new Error('the lane reported no node');
  const objects = vcsimObjects(capv, namespace, node);
  await core.createNamespacedSecret({ namespace, body: objects.secret });
  await core.createNamespacedPod({ namespace, body: objects.pod });
  await core.createNamespacedService({ namespace, body: objects.service });
  const hint = `the simulator's log: kubectl -n ${namespace} logs vcsim -c vcsim`;
  let last = 'no log yet';
  const ready = await waitFor(
    'the simulator Pod to write its ready line',
    async () => {
      const pod = await core.readNamespacedPod({ namespace, name: 'vcsim' });
      const terminated = pod.status?.containerStatuses?.find((c) => c.state?.terminated);
      if (terminated) throw new Error(`container ${terminated.name} of the simulator Pod ended: ${hint}`);
      const text = await core
        .readNamespacedPodLog({ namespace, name: 'vcsim', container: 'vcsim' })
        .then(String)
        .catch((error: unknown) => {
          last = String(error).slice(0, 300);
          return '';
        });
      const line = text.split('\n').find((l) => l.startsWith('{"url"'));
      return line === undefined ? undefined : VcsimReadyLine.parse(JSON.parse(line));
    },
    { timeoutMs: 180_000, intervalMs: 500, describe: () => `${last}; ${hint}` },
  );
  const [first, second, ...rest] = ready.networks;
  if (first === undefined || second === undefined) throw new Error('the simulator reported fewer than two networks');
  const forward = await portForward(capv, lane.kubeconfigPath, namespace, 'vcsim', VCSIM_PORTS.inspect);
  return {
    server: `vcsim.${namespace}.svc:${VCSIM_PORTS.service}`,
    thumbprint: ready.thumbprint,
    datacenter: ready.datacenter,
    cluster: ready.cluster,
    datastore: ready.datastore,
    resourcePool: ready.resourcePool,
    folder: ready.folder,
    networks: [first, second, ...rest],
    template: ready.template,
    hint,
    vms: async () => {
      const response = await fetch(`http://127.0.0.1:${forward.port}/vms`);
      if (!response.ok) throw new Error(`GET /vms through the port-forward answered ${response.status}`);
      return z.array(VcsimVm).parse(await response.json());
    },
    stop: async () => {
      forward.child.kill('SIGTERM');
      await core.deleteNamespacedPod({ namespace, name: 'vcsim', gracePeriodSeconds: 0 }).catch(() => undefined);
    },
  };
}
