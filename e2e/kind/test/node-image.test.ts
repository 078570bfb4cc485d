/**
 * The offline kind node image, checked on the lane's own cluster (one cluster for the image's checks and the lane,
 * instead of a second one created only for them): every kube-system Pod Ready from the node's preloaded images, DNS
 * and Service routing from a Pod, and no image ever pulled — by the time this file runs the lane has installed Cluster
 * API, Tally, Sim and CAPV from loaded images, so "no pull" covers all of them. That `delete()` leaves no container,
 * volume or network is checked by the delete itself (tools/kind's `createKindCluster`), which the lane's teardown calls.
 */
import { NODE_IMAGES } from '@tally-ipam/kind';
import { waitFor } from '@tally-ipam/testenv';
import { describe, expect, inject, it } from 'vitest';
import { z } from 'zod';
import { laneNodeExec } from '../lane/kind.js';
import { LANE_CLUSTER_PROVIDE_KEY } from '../lane/provided.js';

const lane = inject(LANE_CLUSTER_PROVIDE_KEY);
const node = lane.nodes[0] ?? '';

const PodList = z.object({
  items: z.array(
    z.object({
      metadata: z.object({ name: z.string() }),
      spec: z.object({ nodeName: z.string().optional(), containers: z.array(z.object({ image: z.string() })) }),
      status: z.object({
        phase: z.string().optional(),
        conditions: z.array(z.object({ type: z.string(), status: z.string() })).optional(),
      }),
    }),
  ),
});
const EventList = z.object({
  items: z.array(z.object({ reason: z.string().optional(), message: z.string().optional() })),
});

const readiness = (pod: z.infer<typeof PodList>['items'][number]): string | undefined =>
  pod.status.conditions?.find((condition) => condition.type === 'Ready')?.status;

/** kubectl on the node, with the node's admin kubeconfig. */
const kubectl = (args: readonly string[]): Promise<string> =>
  laneNodeExec(node, ['kubectl', '--kubeconfig=/etc/kubernetes/admin.conf', ...args]);

describe("the offline node image, on the lane's cluster", () => {
  it('runs every kube-system Pod (etcd, API server, controller manager, scheduler, kube-proxy, CoreDNS) Ready from preloaded images', async () => {
    // Polled, not `kubectl wait`: a Pod that is not Ready (a control plane component restarted by a lost lease on a
    // busy machine, say) is named in the failure, and no single exec outlives its own deadline. Only the Pods on the
    // lane's node: the lifecycle fleet registers Node objects of its workload Machines (no kubelet behind them), on
    // which kube-proxy's DaemonSet places Pods that stay Pending.
    let notReady: string[] = [];
    const pods = await waitFor(
      `every kube-system Pod on ${node} Running and Ready`,
      async () => {
        const all = PodList.parse(JSON.parse(await kubectl(['get', 'pods', '-n', 'kube-system', '-o', 'json'])));
        const list = { items: all.items.filter((pod) => pod.spec.nodeName === node) };
        notReady = list.items
          .filter((pod) => pod.status.phase !== 'Running' || readiness(pod) !== 'True')
          .map((pod) => `${pod.metadata.name} ${pod.status.phase ?? 'no phase'} Ready=${readiness(pod) ?? 'none'}`);
        return list.items.length > 0 && notReady.length === 0 ? list : undefined;
      },
      { timeoutMs: 300_000, intervalMs: 2_000, describe: () => `not Ready: ${notReady.join('; ') || 'none listed'}` },
    );
    for (const prefix of [
      'etcd-',
      'kube-apiserver-',
      'kube-controller-manager-',
      'kube-scheduler-',
      'kube-proxy-',
      'coredns-',
    ]) {
      expect(
        pods.items.some((pod) => pod.metadata.name.startsWith(prefix)),
        `a ${prefix}* Pod`,
      ).toBe(true);
    }
    const images = new Set(pods.items.flatMap((pod) => pod.spec.containers.map((container) => container.image)));
    expect([...images].sort()).toEqual(
      [
        NODE_IMAGES.apiserver,
        NODE_IMAGES.controllerManager,
        NODE_IMAGES.scheduler,
        NODE_IMAGES.proxy,
        NODE_IMAGES.etcd,
        NODE_IMAGES.coredns,
      ].sort(),
    );
  });

  it('lets a Pod resolve kubernetes.default through CoreDNS and reach the API server through its Service IP', async () => {
    const name = `dns-and-service-${process.pid}`;
    const serviceIP = (
      await kubectl(['get', 'service', 'kubernetes', '-n', 'default', '-o', 'jsonpath={.spec.clusterIP}'])
    ).trim();
    // kube-proxy's image is the only one on the node with a shell; imagePullPolicy Never: it must be there already.
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'default' },
      spec: {
        restartPolicy: 'Never',
        containers: [
          {
            name: 'main',
            image: NODE_IMAGES.proxy,
            imagePullPolicy: 'Never',
            command: [
              'bash',
              '-c',
              'set -e; getent hosts kubernetes.default; timeout 10 bash -c "exec 3<>/dev/tcp/kubernetes.default/443" && echo connected',
            ],
          },
        ],
      },
    };
    await laneNodeExec(
      node,
      ['kubectl', '--kubeconfig=/etc/kubernetes/admin.conf', 'apply', '-f', '-'],
      JSON.stringify(pod),
    );
    try {
      await kubectl(['wait', '--for=jsonpath={.status.phase}=Succeeded', `pod/${name}`, '--timeout=100s']);
      const output = await kubectl(['logs', name]);
      expect(output).toContain(`${serviceIP} `);
      expect(output).toContain('kubernetes.default');
      expect(output.trim().endsWith('connected')).toBe(true);
    } finally {
      await kubectl(['delete', 'pod', name, '--wait=false']);
    }
  });

  it('never pulled an image for anything the lane runs (no Pulling event, no PullImage call in containerd)', async () => {
    // By field selector: the lane's Events are many (every claim's), the pulls should be none.
    for (const reason of ['Pulling', 'Failed', 'BackOff']) {
      const events = EventList.parse(
        JSON.parse(
          await kubectl(['get', 'events', '--all-namespaces', `--field-selector=reason=${reason}`, '-o', 'json']),
        ),
      );
      const pulls = events.items.filter(
        (e) => e.reason === 'Pulling' || /ErrImagePull|ImagePullBackOff|pulling image/i.test(e.message ?? ''),
      );
      expect(pulls, `${reason} Events about pulls`).toEqual([]);
    }
    // Counted on the node: containerd's log of the whole lane is long, the counts are what matter.
    const count = async (pattern: string): Promise<number> =>
      Number(
        (
          await laneNodeExec(node, [
            'sh',
            '-c',
            `journalctl --no-pager -u containerd -o cat | grep -c '${pattern}' || true`,
          ])
        ).trim(),
      );
    expect(await count('RunPodSandbox'), 'containerd started Pod sandboxes').toBeGreaterThan(0);
    expect(await count('PullImage'), 'PullImage calls in containerd').toBe(0);
  });
});
