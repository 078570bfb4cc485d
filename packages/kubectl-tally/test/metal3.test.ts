import { METAL3_IPAM_V1ALPHA1_API_VERSION, WATCH_FILTER_LABEL } from '@tally-ipam/api-types';
import { METAL3_CLAIM_RESOURCE, METAL3_POOL_RESOURCE } from '@tally-ipam/metal3-ipam';
import { waitFor } from '@tally-ipam/testenv';
import { beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { FILE_WATCH_FILTER, runCli, usePluginTestFile } from './support.js';

/**
 * The Metal3 API (ipam.metal3.io) served by Tally beside its own: this file installs its CRDs, so `pools` lists the
 * IPPool with counts from its ranges and IPAddresses, and `who` follows a Metal3 ledger entry to its IPClaim and pool.
 * Addresses in 10.74.0.0/24.
 */

const file = usePluginTestFile({ metal3: true });
let namespace: string;
let address: string;

beforeAll(async () => {
  namespace = await file.namespace('tally-metal3');
  await file.client.create(METAL3_POOL_RESOURCE, {
    apiVersion: METAL3_IPAM_V1ALPHA1_API_VERSION,
    kind: 'IPPool',
    metadata: { name: 'bm', namespace },
    spec: { namePrefix: 'bm', pools: [{ start: '10.74.0.10', end: '10.74.0.13' }], prefix: 24 },
  });
  await file.client.create(METAL3_CLAIM_RESOURCE, {
    apiVersion: METAL3_IPAM_V1ALPHA1_API_VERSION,
    kind: 'IPClaim',
    metadata: { name: 'host-0', namespace, labels: { [WATCH_FILTER_LABEL]: FILE_WATCH_FILTER } },
    spec: { pool: { name: 'bm' } },
  });
  address = await waitFor('IPClaim host-0 to get its address', async () => {
    const claim = await file.client.get(METAL3_CLAIM_RESOURCE, { namespace, name: 'host-0' });
    return claim.status?.address?.name;
  });
});

const Pool = z.looseObject({
  apiGroup: z.string(),
  kind: z.string(),
  name: z.string(),
  counts: z.object({ total: z.number(), used: z.number(), free: z.number(), outOfRange: z.number() }),
  recentAllocations: z.number(),
});

describe('kubectl tally with the Metal3 API served', () => {
  it('pools: the IPPool, counted from its ranges and its IPAddresses', async () => {
    const run = await runCli(['pools', '-n', namespace, '-o', 'json']);
    expect(run.status, run.stderr).toBe(0);
    const pools = z.object({ items: z.array(Pool) }).parse(JSON.parse(run.stdout)).items;
    expect(pools).toEqual([
      expect.objectContaining({
        apiGroup: 'ipam.metal3.io',
        kind: 'IPPool',
        name: 'bm',
        counts: { total: 4, used: 1, free: 3, outOfRange: 0 },
        recentAllocations: 1,
      }),
    ]);
    const table = await runCli(['pools', '-n', namespace]);
    expect(table.stdout.split('\n')[1]).toMatch(/^IPPool\s+bm\s+4\s+1\s+3\s+0\s+\[##\.{8}\]\s+25%\s+~3h\s+\S+$/);
  });

  it('who: the ledger entry, the Metal3 IPAddress, the IPClaim and the IPPool', async () => {
    const run = await runCli(['who', '10.74.0.0/24', '-o', 'json']);
    expect(run.status, run.stderr).toBe(0);
    const [held, ...more] = z.object({ items: z.array(z.looseObject({})) }).parse(JSON.parse(run.stdout)).items;
    expect(more).toEqual([]);
    expect(held).toMatchObject({
      namespace,
      claim: { kind: 'IPClaim', name: 'host-0', state: 'found' },
      pool: { kind: 'IPPool', name: 'bm', state: 'found' },
      ipAddress: { apiGroup: 'ipam.metal3.io', name: address },
      ledgerEntry: { claim: { apiGroup: 'ipam.metal3.io', kind: 'IPClaim', name: 'host-0' } },
    });
  });

  it('leaks: none, the IPAddress having its IPClaim and the entry its IPAddress', async () => {
    expect(await runCli(['leaks', '-n', namespace])).toEqual({
      status: 0,
      stdout: '',
      stderr: `No leaks found in namespace ${namespace}.\n`,
    });
  });
});
