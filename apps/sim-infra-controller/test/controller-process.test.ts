import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { Client } from '@tally-ipam/controller-kit/client';
import { healthProbePort } from '@tally-ipam/ship';
import { CLUSTER_RESOURCE, SIM_CLUSTER_RESOURCE, SIM_GROUP } from '@tally-ipam/sim-infra';
import { waitFor } from '@tally-ipam/testenv';
import { testEnv, withTestNamespace } from '@tally-ipam/testenv/vitest';
import { describe, expect, it } from 'vitest';

const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));
/** A child process on a loaded machine: generous deadline, modest polling. */
const POLL = { timeoutMs: 90_000, intervalMs: 250 };

function exitCode(child: ChildProcess): Promise<number | null> {
  return child.exitCode !== null
    ? Promise.resolve(child.exitCode)
    : once(child, 'exit').then(([code]) => code as number | null);
}

describe('sim-infra-controller process', () => {
  it('becomes ready, provisions a SimCluster, and exits 0 on SIGTERM', async () => {
    const env = testEnv();
    const ns = await withTestNamespace(env.kubeConfig, 'sim-app');
    const client = new Client(env.kubeConfig, { fieldManager: 'sim-app-test' });
    const child = spawn(
      process.execPath,
      [
        MAIN,
        '--kubeconfig',
        env.kubeconfigPath,
        '--namespace',
        ns.name,
        '--webhook-port=0',
        '--metrics-bind-address=0',
        '--health-probe-bind-address=127.0.0.1:0',
        // Info, for the "serving health probes" line that names the port.
        '--log-level=info',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    try {
      // The process binds port 0 itself, so no other process can take the port between choosing and binding it.
      const healthPort = await waitFor('the "serving health probes" log line', () => healthProbePort(output), POLL);
      await waitFor(
        'readyz',
        async () => {
          const response = await fetch(`http://127.0.0.1:${healthPort}/readyz`);
          return response.status === 200 ? true : undefined;
        },
        POLL,
      );
      const cluster = await client.create(CLUSTER_RESOURCE, {
        apiVersion: 'cluster.x-k8s.io/v1beta2',
        kind: 'Cluster',
        metadata: { name: 'app', namespace: ns.name },
        spec: { infrastructureRef: { apiGroup: SIM_GROUP, kind: 'SimCluster', name: 'app' } },
      });
      await client.create(SIM_CLUSTER_RESOURCE, {
        apiVersion: `${SIM_GROUP}/v1alpha1`,
        kind: 'SimCluster',
        metadata: {
          name: 'app',
          namespace: ns.name,
          ownerReferences: [
            { apiVersion: 'cluster.x-k8s.io/v1beta2', kind: 'Cluster', name: 'app', uid: cluster.metadata.uid ?? '' },
          ],
        },
        spec: { controlPlaneEndpoint: { host: '192.0.2.1', port: 6443 } },
      });
      const provisioned = await waitFor(
        'SimCluster provisioned',
        async () => {
          const simCluster = await client.get(SIM_CLUSTER_RESOURCE, { namespace: ns.name, name: 'app' });
          return simCluster.status?.initialization?.provisioned ? simCluster : undefined;
        },
        POLL,
      );
      expect(provisioned.metadata.finalizers).toEqual(['simcluster.infrastructure.cluster.x-k8s.io']);
      // The finalizer must go before the namespace can: let the controller clean up while it still runs.
      await client.delete(SIM_CLUSTER_RESOURCE, { namespace: ns.name, name: 'app' });
      await waitFor(
        'SimCluster gone',
        async () => {
          const list = await client.list(SIM_CLUSTER_RESOURCE, { namespace: ns.name });
          return list.items.length === 0 ? true : undefined;
        },
        POLL,
      );
    } finally {
      const exited = exitCode(child);
      child.kill('SIGTERM');
      expect(await exited, output).toBe(0);
      client.close();
    }
  });

  it('exits 2 on a bad flag, naming it', async () => {
    const child = spawn(process.execPath, [MAIN, '--concurrency=lots'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    expect(await exitCode(child)).toBe(2);
    expect(stderr).toContain('invalid value "lots" for flag --concurrency');
  });
});
