import { randomBytes } from 'node:crypto';
import {
  ADDRESS_RESOURCE,
  CLAIM_RESOURCE,
  GLOBAL_IN_CLUSTER_IP_POOL_KIND,
  GLOBAL_IN_CLUSTER_PREFIX_POOL_KIND,
  IN_CLUSTER_IP_POOL_KIND,
  IN_CLUSTER_IPAM_GROUP,
  IN_CLUSTER_PREFIX_POOL_KIND,
  IN_CLUSTER_V1ALPHA2_API_VERSION,
  IPAM_V1BETA2_API_VERSION,
} from '@tally-ipam/api-types';
import { POOL_RESOURCES } from '@tally-ipam/ipam-provider';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { runCli, usePluginTestFile } from './support.js';

/**
 * The in-cluster provider's pool kinds (`InClusterIPPool`, `GlobalInClusterIPPool`, `InClusterPrefixPool`,
 * `GlobalInClusterPrefixPool` of `ipam.cluster.x-k8s.io/v1alpha2`), whose CRDs the global setup installs. The plugin only reads, so the test
 * writes the pools' `status.ipAddresses` itself, and the IPAddress and claim of a holding: the file's Tally provider
 * runs (as in every file) but without in-cluster serving, so it leaves these objects alone. Addresses in
 * 10.75.0.0/24.
 */

const file = usePluginTestFile();
let namespace: string;
const INCLUSTER_POOL = POOL_RESOURCES[IN_CLUSTER_IP_POOL_KIND];
const GLOBAL_POOL = POOL_RESOURCES[GLOBAL_IN_CLUSTER_IP_POOL_KIND];
const PREFIX_POOL = POOL_RESOURCES[IN_CLUSTER_PREFIX_POOL_KIND];
const GLOBAL_PREFIX_POOL = POOL_RESOURCES[GLOBAL_IN_CLUSTER_PREFIX_POOL_KIND];
/** Cluster-scoped, so named for this run: it outlives no namespace and must not meet another run's. */
const globalName = `kubectl-tally-${randomBytes(4).toString('hex')}`;

async function writeCounts(
  resource: typeof INCLUSTER_POOL,
  key: { namespace?: string; name: string },
  ipAddresses: { total: number; used: number; free: number; outOfRange: number },
): Promise<void> {
  await file.client.mergePatch(resource, key, { status: { ipAddresses } }, { subresource: 'status' });
}

beforeAll(async () => {
  namespace = await file.namespace('tally-incluster');
  await file.client.create(INCLUSTER_POOL, {
    apiVersion: IN_CLUSTER_V1ALPHA2_API_VERSION,
    kind: IN_CLUSTER_IP_POOL_KIND,
    metadata: { name: 'vms', namespace },
    spec: { addresses: ['10.75.0.10-10.75.0.19'], prefix: 24, gateway: '10.75.0.1' },
  });
  await writeCounts(INCLUSTER_POOL, { namespace, name: 'vms' }, { total: 10, used: 1, free: 9, outOfRange: 0 });
  // No watch-filter label: no provider of any test file serves this claim; the IPAddress below is its holding.
  await file.client.create(CLAIM_RESOURCE, {
    apiVersion: IPAM_V1BETA2_API_VERSION,
    kind: 'IPAddressClaim',
    metadata: { name: 'vm-0', namespace },
    spec: { poolRef: { apiGroup: IN_CLUSTER_IPAM_GROUP, kind: IN_CLUSTER_IP_POOL_KIND, name: 'vms' } },
  });
  await file.client.create(ADDRESS_RESOURCE, {
    apiVersion: IPAM_V1BETA2_API_VERSION,
    kind: 'IPAddress',
    metadata: { name: 'vm-0', namespace },
    spec: {
      address: '10.75.0.10',
      prefix: 24,
      gateway: '10.75.0.1',
      claimRef: { name: 'vm-0' },
      poolRef: { apiGroup: IN_CLUSTER_IPAM_GROUP, kind: IN_CLUSTER_IP_POOL_KIND, name: 'vms' },
    },
  });
});

afterAll(async () => {
  // The namespace goes with the file; the global pool is cluster-scoped and goes here, should its test have failed.
  await file.client.delete(GLOBAL_POOL, { name: globalName }).catch(() => undefined);
  await file.client.delete(GLOBAL_PREFIX_POOL, { name: globalName }).catch(() => undefined);
});

const Pool = z.looseObject({
  apiGroup: z.string(),
  kind: z.string(),
  name: z.string(),
  counts: z.object({ total: z.number(), used: z.number(), free: z.number(), outOfRange: z.number() }),
  ready: z.null(),
  recentAllocations: z.number(),
});

describe('kubectl tally with the in-cluster pool kinds installed', () => {
  it('pools: an InClusterIPPool and a GlobalInClusterIPPool, counted from status.ipAddresses, READY Unknown', async () => {
    // Every `pools` run lists global pools, so this one exists only for this test: the other files, sharing the
    // control plane, assert on their namespaces' exact pool lists.
    await file.client.create(GLOBAL_POOL, {
      apiVersion: IN_CLUSTER_V1ALPHA2_API_VERSION,
      kind: GLOBAL_IN_CLUSTER_IP_POOL_KIND,
      metadata: { name: globalName },
      spec: { addresses: ['10.75.1.0/28'], prefix: 24 },
    });
    try {
      await writeCounts(GLOBAL_POOL, { name: globalName }, { total: 15, used: 3, free: 12, outOfRange: 1 });
      const run = await runCli(['pools', '-n', namespace, '-o', 'json']);
      const table = await runCli(['pools', '-n', namespace]);
      expect(run.status, run.stderr).toBe(0);
      const pools = z.object({ items: z.array(Pool) }).parse(JSON.parse(run.stdout)).items;
      expect(pools.find((pool) => pool.name === globalName)).toEqual(
        expect.objectContaining({
          apiGroup: IN_CLUSTER_IPAM_GROUP,
          kind: GLOBAL_IN_CLUSTER_IP_POOL_KIND,
          counts: { total: 15, used: 3, free: 12, outOfRange: 1 },
          ready: null,
          recentAllocations: 0,
        }),
      );
      expect(pools.filter((pool) => pool.kind === IN_CLUSTER_IP_POOL_KIND)).toEqual([
        expect.objectContaining({
          apiGroup: IN_CLUSTER_IPAM_GROUP,
          name: 'vms',
          namespace,
          counts: { total: 10, used: 1, free: 9, outOfRange: 0 },
          ready: null,
          recentAllocations: 1,
        }),
      ]);
      const lines = table.stdout.split('\n');
      expect(lines.find((line) => line.startsWith(`${IN_CLUSTER_IP_POOL_KIND} `))).toMatch(
        /^InClusterIPPool\s+vms\s+10\s+1\s+9\s+0\s+\[#\.{9}\]\s+10%\s+~\S+\s+Unknown$/,
      );
      expect(lines.find((line) => line.includes(globalName))).toMatch(
        new RegExp(`^GlobalInClusterIPPool\\s+${globalName}\\s+15\\s+3\\s+12\\s+1\\s+.*\\s+Unknown$`),
      );
    } finally {
      await file.client.delete(GLOBAL_POOL, { name: globalName });
    }
  });

  it('pools: an InClusterPrefixPool and a GlobalInClusterPrefixPool, counted from status.ipAddresses as the reference writes them', async () => {
    await file.client.create(PREFIX_POOL, {
      apiVersion: IN_CLUSTER_V1ALPHA2_API_VERSION,
      kind: IN_CLUSTER_PREFIX_POOL_KIND,
      metadata: { name: 'subnets', namespace },
      spec: { prefixes: ['fd00:75::/48'], allocationPrefixLength: 56 },
    });
    // Cluster-scoped, so it shows in every namespace's listing: only for this test, as the global IP pool above.
    await file.client.create(GLOBAL_PREFIX_POOL, {
      apiVersion: IN_CLUSTER_V1ALPHA2_API_VERSION,
      kind: GLOBAL_IN_CLUSTER_PREFIX_POOL_KIND,
      metadata: { name: globalName },
      spec: { prefixes: ['fd00:76::/60'], allocationPrefixLength: 64 },
    });
    try {
      await writeCounts(PREFIX_POOL, { namespace, name: 'subnets' }, { total: 256, used: 2, free: 254, outOfRange: 0 });
      await writeCounts(GLOBAL_PREFIX_POOL, { name: globalName }, { total: 16, used: 0, free: 16, outOfRange: 0 });
      const run = await runCli(['pools', '-n', namespace, '-o', 'json']);
      expect(run.status, run.stderr).toBe(0);
      const pools = z.object({ items: z.array(Pool) }).parse(JSON.parse(run.stdout)).items;
      expect(pools.filter((pool) => pool.kind === IN_CLUSTER_PREFIX_POOL_KIND)).toEqual([
        expect.objectContaining({
          apiGroup: IN_CLUSTER_IPAM_GROUP,
          name: 'subnets',
          namespace,
          counts: { total: 256, used: 2, free: 254, outOfRange: 0 },
          ready: null,
        }),
      ]);
      expect(pools.filter((pool) => pool.kind === GLOBAL_IN_CLUSTER_PREFIX_POOL_KIND)).toEqual([
        expect.objectContaining({
          apiGroup: IN_CLUSTER_IPAM_GROUP,
          name: globalName,
          counts: { total: 16, used: 0, free: 16, outOfRange: 0 },
          ready: null,
        }),
      ]);
    } finally {
      await file.client.delete(GLOBAL_PREFIX_POOL, { name: globalName });
    }
  });

  it('who: the IPAddress of an InClusterIPPool, with its claim and the pool found', async () => {
    const run = await runCli(['who', '10.75.0.10', '-o', 'json']);
    expect(run.status, run.stderr).toBe(0);
    const [held, ...more] = z.object({ items: z.array(z.looseObject({})) }).parse(JSON.parse(run.stdout)).items;
    expect(more).toEqual([]);
    expect(held).toMatchObject({
      address: '10.75.0.10',
      namespace,
      claim: { kind: 'IPAddressClaim', name: 'vm-0', state: 'found' },
      ipAddress: { name: 'vm-0', pool: { kind: IN_CLUSTER_IP_POOL_KIND, name: 'vms' } },
      pool: { kind: IN_CLUSTER_IP_POOL_KIND, name: 'vms', state: 'found' },
      ledgerEntry: null,
    });
  });

  it('why: the claim names its InClusterIPPool, found, with the counts of its status', async () => {
    const run = await runCli(['why', 'vm-0', '-n', namespace, '-o', 'json']);
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({
      pool: {
        kind: IN_CLUSTER_IP_POOL_KIND,
        name: 'vms',
        namespace,
        state: 'found',
        exhausted: false,
        counts: { total: 10, used: 1, free: 9, outOfRange: 0 },
      },
    });
  });

  it('leaks: none, the IPAddress having its claim', async () => {
    expect(await runCli(['leaks', '-n', namespace])).toEqual({
      status: 0,
      stdout: '',
      stderr: `No leaks found in namespace ${namespace}.\n`,
    });
  });
});
