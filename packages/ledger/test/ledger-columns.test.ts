/**
 * `kubectl get taddrledger` against the real API server: the columns come from the summary the writer puts in `status`
 * in the same write as the entries (JSONPath can neither count entries nor order addresses numerically).
 */
import { CustomObjectsApi, setHeaderOptions } from '@kubernetes/client-node';
import {
  GLOBAL_TALLY_IP_POOL_KIND,
  type LedgerPoolReference,
  TALLY_GROUP,
  TALLY_IP_POOL_KIND,
} from '@tally-ipam/api-types';
import { describe, expect, it } from 'vitest';
import { addressEntryKey, type HeldUnit, LEDGER_RESOURCE, ledgerNameOf } from '../src/index.js';
import { testClient, useLedgerWriters, usePrivateControlPlane } from './support.js';

const kubeConfig = usePrivateControlPlane();
const { writer } = useLedgerWriters(kubeConfig);

function unit(address: string): HeldUnit {
  return { address, prefix: 24, isPrefix: false, entryKey: addressEntryKey(address) };
}

const LEFT: LedgerPoolReference = {
  apiGroup: TALLY_GROUP,
  kind: TALLY_IP_POOL_KIND,
  namespace: 'team-a',
  name: 'left',
};
const RIGHT: LedgerPoolReference = { apiGroup: TALLY_GROUP, kind: GLOBAL_TALLY_IP_POOL_KIND, name: 'right' };

interface Table {
  kind: string;
  columnDefinitions: { name: string; priority: number }[];
  rows: { cells: unknown[] }[];
}

async function ledgerTable(name: string): Promise<Table> {
  const api = kubeConfig().makeApiClient(CustomObjectsApi);
  return (await api.getClusterCustomObject(
    { group: TALLY_GROUP, version: 'v1alpha1', plural: LEDGER_RESOURCE.plural, name },
    setHeaderOptions('Accept', 'application/json;as=Table;v=v1;g=meta.k8s.io'),
  )) as Table;
}

describe('kubectl get taddrledger', () => {
  it('shows the entry count, the numerically lowest and highest address and the pools, kept by every write', async () => {
    const ledgers = writer();
    // 10.222.0.10 sorts before 10.222.0.9 as key text: the columns must order by address, not by key.
    const units = ['10.222.0.9', '10.222.0.10', '10.222.0.30'].map(unit);
    const name = ledgerNameOf(units[0] as HeldUnit);
    expect(new Set(units.map(ledgerNameOf))).toEqual(new Set([name]));
    const [nine, ten, thirty] = units as [HeldUnit, HeldUnit, HeldUnit];
    for (const [held, pool, claim] of [
      [nine, LEFT, 'a'],
      [ten, RIGHT, 'b'],
      [thirty, LEFT, 'c'],
    ] as const) {
      expect((await ledgers.hold(held, pool, { namespace: 'team-a', name: claim, uid: `uid-${claim}` }, 0)).ok).toBe(
        true,
      );
    }
    const table = await ledgerTable(name);
    expect(table.kind).toBe('Table');
    expect(table.columnDefinitions.map((column) => column.name)).toEqual([
      'Name',
      'Entries',
      'First',
      'Last',
      'Pools',
      'Age',
    ]);
    expect(table.rows[0]?.cells.slice(0, 5)).toEqual([name, 3, '10.222.0.9', '10.222.0.30', '["right","team-a/left"]']);

    // A release that removes an entry rewrites the summary in the same write.
    expect((await ledgers.release(thirty, 'uid-c')).ok).toBe(true);
    const client = testClient(kubeConfig());
    try {
      const stored = await client.get(LEDGER_RESOURCE, { name });
      expect(stored.status).toEqual({
        entries: 2,
        first: '10.222.0.9',
        last: '10.222.0.10',
        pools: ['right', 'team-a/left'],
      });
    } finally {
      client.close();
    }
  });
});
