/**
 * `kubectl tally` the way an operator runs it: the real kubectl (kind's build, made by `npm test`'s prepare stage)
 * finds the plugin as `kubectl-tally` on `PATH` and runs it against the run's cluster (on the kind lane: Tally in
 * Pods). The plugin's own tests run its commands directly; this file proves kubectl's plugin discovery and argument
 * passing reach it (`kubectl plugin list`, `kubectl tally …`), installed as `npm install -g` leaves it: an executable
 * named `kubectl-tally` on `PATH` that runs the package's `dist/cli.js` with Node.
 */
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@tally-ipam/controller-kit/client';
import { ensureKindBinaries } from '@tally-ipam/kind';
import { testEnv, withTestNamespace } from '@tally-ipam/testenv/vitest';
import { afterAll, describe, expect, it, onTestFinished } from 'vitest';
import { z } from 'zod';
import { ADDRESS_V1BETA2, CLAIM_V1BETA2, createClusterOnSim, eventually, logsHint, Objects } from './harness.js';

const run = promisify(execFile);
/** The package's bin, where an install of the package puts it (resolved as a dependency of this package). */
const PLUGIN_CLI = join(
  dirname(createRequire(import.meta.url).resolve('@tally-ipam/kubectl-tally/package.json')),
  'dist',
  'cli.js',
);
const POOL = { group: 'ipam.cluster.x-k8s.io', version: 'v1alpha1', plural: 'tallyippools' };
const POOL_NAME = 'plugin-pool';
const CLUSTER_SPEC = { controlPlaneEndpoint: { host: '192.0.2.10', port: 6443 } };

/** A directory on `PATH` holding only the plugin, as a global npm install leaves its bin. */
const pluginDir = mkdtempSync(join(tmpdir(), 'tally-kubectl-plugin-'));
afterAll(() => rmSync(pluginDir, { recursive: true, force: true }));
const plugin = join(pluginDir, 'kubectl-tally');
writeFileSync(plugin, `#!/bin/sh\nexec '${process.execPath}' '${PLUGIN_CLI}' "$@"\n`);
chmodSync(plugin, 0o755);

/**
 * The real kubectl, with a `PATH` of the plugin's directory and the system's: not this process's, where pnpm puts the
 * workspace's own `node_modules/.bin/kubectl-tally` (kubectl would warn that one overshadows the other).
 */
async function kubectl(args: readonly string[]): Promise<{ stdout: string; stderr: string }> {
  const { paths } = await ensureKindBinaries();
  return run(paths.kubectl, [...args], {
    env: { ...process.env, PATH: `${pluginDir}:/usr/local/bin:/usr/bin:/bin` },
    timeout: 120_000,
    maxBuffer: 16 * 1024 * 1024,
  });
}

const PoolList = z.object({
  kind: z.literal('PoolList'),
  items: z.array(
    z.looseObject({
      kind: z.string(),
      name: z.string(),
      namespace: z.string().optional(),
      counts: z.looseObject({ total: z.number(), used: z.number(), free: z.number() }).optional(),
    }),
  ),
});
const HoldingList = z.object({
  kind: z.literal('HoldingList'),
  items: z.array(z.looseObject({ address: z.string(), namespace: z.string().optional(), claim: z.unknown() })),
});
const BoundClaim = z.object({
  status: z.object({ addressRef: z.object({ name: z.string() }) }).optional(),
});
const Address = z.object({ spec: z.object({ address: z.string() }) });

describe('kubectl tally through kubectl', () => {
  it('is listed by kubectl plugin list and answers pools and who through kubectl', async () => {
    const listed = await kubectl(['plugin', 'list']);
    expect(listed.stdout).toContain(plugin);
    expect(listed.stderr).not.toMatch(/warning/i);

    const env = testEnv();
    const hint = logsHint(env);
    const ns = await withTestNamespace(env.kubeConfig, 'e2e-kubectl-plugin');
    const objects = new Objects(env.kubeConfig, ns.name);
    const client = new Client(env.kubeConfig, { fieldManager: 'tally-e2e' });
    onTestFinished(() => client.close());
    await createClusterOnSim(client, env, { namespace: ns.name, name: 'workload' }, CLUSTER_SPEC);
    await objects.create(POOL, {
      apiVersion: 'ipam.cluster.x-k8s.io/v1alpha1',
      kind: 'TallyIPPool',
      metadata: { name: POOL_NAME },
      spec: { addresses: ['10.78.0.1-10.78.0.4'], prefix: 24 },
    });
    const claims = ['machine-0', 'machine-1'];
    for (const name of claims) {
      await objects.create(CLAIM_V1BETA2, {
        apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
        kind: 'IPAddressClaim',
        metadata: { name, labels: { 'cluster.x-k8s.io/cluster-name': 'workload' } },
        spec: { clusterName: 'workload', poolRef: { apiGroup: POOL.group, kind: 'TallyIPPool', name: POOL_NAME } },
      });
    }
    const addresses = await eventually(
      'both claims bound',
      async () => {
        const bound: string[] = [];
        for (const name of claims) {
          const ref = BoundClaim.parse(await objects.get(CLAIM_V1BETA2, name)).status?.addressRef?.name;
          if (!ref) return undefined;
          bound.push(Address.parse(await objects.get(ADDRESS_V1BETA2, ref)).spec.address);
        }
        return bound;
      },
      { hint },
    );

    // kubectl hands a plugin the arguments after its name: the plugin's own --kubeconfig names the lane's cluster.
    const kubeconfig = `--kubeconfig=${env.kubeconfigPath}`;
    const pools = await eventually(
      "the pool's status counting both addresses, through kubectl tally pools",
      async () => {
        const { stdout } = await kubectl(['tally', 'pools', '-n', ns.name, '-o', 'json', kubeconfig]);
        const list = PoolList.parse(JSON.parse(stdout));
        return list.items.find((pool) => pool.name === POOL_NAME)?.counts?.used === 2 ? list : undefined;
      },
      { hint },
    );
    expect(pools.items.map((pool) => [pool.kind, pool.name, pool.counts])).toEqual([
      ['TallyIPPool', POOL_NAME, expect.objectContaining({ total: 4, used: 2, free: 2 })],
    ]);

    for (const [index, address] of addresses.entries()) {
      const { stdout } = await kubectl(['tally', 'who', address, '-o', 'json', kubeconfig]);
      const holdings = HoldingList.parse(JSON.parse(stdout));
      expect(holdings.items.map((item) => item.address)).toEqual([address]);
      expect(JSON.stringify(holdings.items[0]?.claim)).toContain(claims[index]);
    }

    // The table, as an operator reads it: the pool's row.
    const table = await kubectl(['tally', 'pools', '-n', ns.name, kubeconfig]);
    expect(table.stdout.split('\n')[0]).toMatch(/^KIND\s+NAME\s+TOTAL\s+USED\s+FREE/);
    expect(table.stdout).toMatch(new RegExp(`TallyIPPool\\s+${POOL_NAME}\\s+4\\s+2\\s+2`));
  });
});
