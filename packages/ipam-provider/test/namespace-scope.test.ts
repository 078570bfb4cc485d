import { parseManagerFlags } from '@tally-ipam/controller-kit/manager';
import { describe, expect, it } from 'vitest';
import { ADDRESS_RESOURCE, CLAIM_RESOURCE } from '../src/index.js';
import {
  createClaim,
  createPool,
  FILE_WATCH_FILTER,
  getOrUndefined,
  holdingsOfNamespace,
  startProvider,
  useTestFile,
  waitForAddress,
} from './support.js';

const { client, namespace } = useTestFile();

describe('a provider started with --namespace', () => {
  it('serves the claims of its namespace and never touches a claim of another one', async () => {
    const watched = await namespace('scope-watched');
    const other = await namespace('scope-other');
    await createPool(client, 'TallyIPPool', 'pool', watched, { addresses: ['10.90.0.0/24'], prefix: 24 });
    await createPool(client, 'TallyIPPool', 'pool', other, { addresses: ['10.90.1.0/24'], prefix: 24 });
    // The command line as CAPI's providers take it, through the kit's parser, into the provider's options. One worker:
    // the claims are then reconciled in the order their events arrive.
    const flags = parseManagerFlags(['--namespace', watched, '--watch-filter', FILE_WATCH_FILTER], {
      leaderElectionId: 'namespace-scope-test',
    });
    expect(flags.namespace).toBe(watched);
    const scoped = await startProvider(
      { namespace: flags.namespace, watchFilter: flags.watchFilter, concurrency: 1 },
      'namespace-scoped-provider',
    );
    try {
      // Claims of this file carry its watch-filter label, which no other test file's provider serves: only the scoped
      // provider could reach the claim of the other namespace. It is created first, so a provider that saw it would
      // have finalized it before it allocates the later claim of its own namespace.
      await createClaim(client, other, 'outside', { kind: 'TallyIPPool', name: 'pool' });
      await createClaim(client, watched, 'inside', { kind: 'TallyIPPool', name: 'pool' });
      const address = await waitForAddress(client, watched, 'inside');
      expect(address.spec.address).toBe('10.90.0.1');

      const outside = await client.get(CLAIM_RESOURCE, { namespace: other, name: 'outside' });
      expect(outside.metadata.finalizers ?? []).toEqual([]);
      expect(outside.status).toBeUndefined();
      const writers = ((outside.metadata.managedFields ?? []) as { manager?: string }[]).map((entry) => entry.manager);
      expect(writers).not.toContain('namespace-scoped-provider');
      expect(
        await getOrUndefined(() => client.get(ADDRESS_RESOURCE, { namespace: other, name: 'outside' })),
      ).toBeUndefined();
      expect(await holdingsOfNamespace(client, other)).toEqual([]);
    } finally {
      await scoped.stop();
    }

    // The claim was servable all along: a provider scoped to its namespace serves it.
    const second = await startProvider({ namespace: other, concurrency: 1 }, 'other-namespace-provider');
    try {
      const address = await waitForAddress(client, other, 'outside');
      expect(address.spec.address).toBe('10.90.1.1');
    } finally {
      await second.stop();
    }
  });
});
