import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { run, runCommand } from '../src/exec.js';
import {
  capiManagerImage,
  createKindCluster,
  ensureDockerEngine,
  type KindCluster,
  loadImageArchive,
  NODE_IMAGES,
  nodeExec,
  type PreparedKind,
  prepareKind,
} from '../src/index.js';

const engine = await ensureDockerEngine();

const podListSchema = z.object({
  items: z.array(
    z.object({
      metadata: z.object({ name: z.string() }),
      spec: z.object({ containers: z.array(z.object({ image: z.string() })) }),
      status: z.object({
        phase: z.string().optional(),
        conditions: z.array(z.object({ type: z.string(), status: z.string() })).optional(),
      }),
    }),
  ),
});
const eventListSchema = z.object({
  items: z.array(z.object({ reason: z.string().optional(), message: z.string().optional() })),
});

const kubectl = (cluster: KindCluster, args: readonly string[], input?: string): Promise<string> =>
  nodeExec(cluster, ['kubectl', '--kubeconfig=/etc/kubernetes/admin.conf', ...args], { input });

/** Runs a one-container Pod to completion (imagePullPolicy Never: the image must already be on the node) and returns
 * its logs. */
async function runPodToCompletion(
  cluster: KindCluster,
  name: string,
  container: Record<string, unknown>,
  podSecurityContext: Record<string, unknown> = {},
): Promise<string> {
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: {
      restartPolicy: 'Never',
      securityContext: podSecurityContext,
      containers: [{ name: 'main', imagePullPolicy: 'Never', ...container }],
    },
  };
  await kubectl(cluster, ['apply', '-f', '-'], JSON.stringify(pod));
  await kubectl(cluster, ['wait', '--for=jsonpath={.status.phase}=Succeeded', `pod/${name}`, '--timeout=180s']);
  return kubectl(cluster, ['logs', name]);
}

// This file runs only in the kind lane (`test:kind`), which npm test starts when `docker info` answers; run by hand
// without an engine it fails rather than passing with nothing proven.
if (!engine) {
  describe('kind cluster', () => {
    it('needs a Docker engine', () => {
      throw new Error('no Docker engine answers "docker info" (CI: .ci/docker-engine.sh start)');
    });
  });
} else {
  describe('kind cluster from the offline node image', () => {
    const name = `tally-test-${randomBytes(3).toString('hex')}`;
    let prepared: PreparedKind;
    let cluster: KindCluster | undefined;
    let deleted = false;

    beforeAll(async () => {
      const log = (message: string): void => console.error(`[kind test] ${message}`);
      prepared = await prepareKind({ onProgress: log });
      cluster = await createKindCluster({
        name,
        nodeImage: prepared.nodeImage,
        kindBinary: prepared.kindBinary,
        onProgress: log,
      });
    }, 90 * 60_000);

    afterAll(async () => {
      if (cluster && !deleted) await cluster.delete();
    }, 5 * 60_000);

    const required = (): KindCluster => {
      if (!cluster) throw new Error('the cluster was not created (see beforeAll)');
      return cluster;
    };

    it('runs every kube-system Pod (etcd, API server, controller manager, scheduler, kube-proxy, CoreDNS) Ready from preloaded images', async () => {
      const c = required();
      await kubectl(c, ['wait', '--for=condition=Ready', 'pod', '--all', '-n', 'kube-system', '--timeout=300s']);
      const pods = podListSchema.parse(
        JSON.parse(await kubectl(c, ['get', 'pods', '-n', 'kube-system', '-o', 'json'])),
      );
      const prefixes = [
        'etcd-',
        'kube-apiserver-',
        'kube-controller-manager-',
        'kube-scheduler-',
        'kube-proxy-',
        'coredns-',
      ];
      for (const prefix of prefixes) {
        expect(
          pods.items.some((pod) => pod.metadata.name.startsWith(prefix)),
          `a ${prefix}* Pod`,
        ).toBe(true);
      }
      for (const pod of pods.items) {
        expect(pod.status.phase, pod.metadata.name).toBe('Running');
        expect(pod.status.conditions?.find((c) => c.type === 'Ready')?.status, pod.metadata.name).toBe('True');
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
      const c = required();
      const serviceIP = (
        await kubectl(c, ['get', 'service', 'kubernetes', '-n', 'default', '-o', 'jsonpath={.spec.clusterIP}'])
      ).trim();
      // kube-proxy's image is the only one on the node with a shell.
      const output = await runPodToCompletion(c, 'dns-and-service', {
        image: NODE_IMAGES.proxy,
        command: [
          'bash',
          '-c',
          'set -e; getent hosts kubernetes.default; timeout 10 bash -c "exec 3<>/dev/tcp/kubernetes.default/443" && echo connected',
        ],
      });
      expect(output).toContain(`${serviceIP} `);
      expect(output).toContain('kubernetes.default');
      expect(output.trim().endsWith('connected')).toBe(true);
    });

    it('loads the Cluster API manager image archive and runs /manager in a Pod as non-root', async () => {
      const c = required();
      await loadImageArchive(c, prepared.capiManagerImageArchive);
      const output = await runPodToCompletion(
        c,
        'capi-manager-help',
        { image: capiManagerImage(), args: ['--help'] },
        {
          runAsNonRoot: true,
        },
      );
      expect(output).toContain('--leader-elect');
    });

    it('never tried to pull an image (no Pulling event, no PullImage call in containerd)', async () => {
      const c = required();
      const events = eventListSchema.parse(
        JSON.parse(await kubectl(c, ['get', 'events', '--all-namespaces', '-o', 'json'])),
      );
      const pulls = events.items.filter(
        (e) => e.reason === 'Pulling' || /ErrImagePull|ImagePullBackOff/.test(`${e.reason} ${e.message}`),
      );
      expect(pulls).toEqual([]);
      const containerdLog = await nodeExec(c, ['journalctl', '--no-pager', '-u', 'containerd', '-o', 'cat']);
      expect(containerdLog).toContain('RunPodSandbox');
      expect(containerdLog).not.toMatch(/PullImage/);
    });

    it('deletes its node container, the node volume and its network', async () => {
      const c = required();
      const volumes = (
        await run('docker', [
          'inspect',
          '--format',
          '{{range .Mounts}}{{if eq .Type "volume"}}{{.Name}} {{end}}{{end}}',
          c.nodeContainer,
        ])
      )
        .trim()
        .split(/\s+/)
        .filter(Boolean);
      expect(volumes.length).toBeGreaterThan(0);
      await c.delete();
      deleted = true;
      const containers = await run('docker', [
        'ps',
        '--all',
        '--quiet',
        '--filter',
        `label=io.x-k8s.kind.cluster=${name}`,
      ]);
      expect(containers.trim()).toBe('');
      expect((await runCommand('docker', ['network', 'inspect', c.network])).exitCode).not.toBe(0);
      for (const volume of volumes) {
        expect((await runCommand('docker', ['volume', 'inspect', volume])).exitCode, volume).not.toBe(0);
      }
    });
  });
}
