import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type ChainObject,
  formatChain,
  linkOfKind,
  MAX_CHAIN_LENGTH,
  type OwnerLookup,
  walkOwnerChain,
} from '../src/view/owner-chain.js';

function object(
  kind: string,
  name: string,
  uid: string,
  owner?: { kind: string; name: string; uid: string; controller?: boolean },
): ChainObject {
  return {
    kind,
    metadata: {
      name,
      namespace: 'ns',
      uid,
      ownerReferences: owner ? [{ apiVersion: 'cluster.x-k8s.io/v1beta2', ...owner }] : [],
    },
  };
}

function lookupIn(objects: readonly ChainObject[]): OwnerLookup {
  return async (link) =>
    objects.find((candidate) => candidate.kind === link.kind && candidate.metadata.name === link.name);
}

describe('walkOwnerChain', () => {
  it('follows controller owners up to the Cluster', async () => {
    const cluster = object('Cluster', 'c1', 'u-c');
    const machine = object('Machine', 'm1', 'u-m', { kind: 'Cluster', name: 'c1', uid: 'u-c' });
    const claim = object('IPAddressClaim', 'web-0', 'u-w', {
      kind: 'Machine',
      name: 'm1',
      uid: 'u-m',
      controller: true,
    });
    const chain = await walkOwnerChain(claim, lookupIn([cluster, machine]));
    expect(formatChain(chain)).toBe('Machine/m1 <- Cluster/c1');
    expect(linkOfKind(chain, 'Machine')).toBe('m1');
  });

  it('shows a missing owner, an owner re-created with another uid, and an unreadable one, and stops there', async () => {
    const claim = object('IPAddressClaim', 'web-1', 'u-w', { kind: 'Machine', name: 'gone', uid: 'u-g' });
    expect(formatChain(await walkOwnerChain(claim, lookupIn([])))).toBe('Machine/gone (missing)');
    const recreated = await walkOwnerChain(claim, lookupIn([object('Machine', 'gone', 'u-other')]));
    expect(recreated).toMatchObject([{ state: 'missing', detail: expect.stringContaining('another uid') }]);
    const failing: OwnerLookup = async () => {
      throw new Error('forbidden');
    };
    expect(await walkOwnerChain(claim, failing)).toMatchObject([{ state: 'unreadable', detail: 'forbidden' }]);
    expect(linkOfKind([], 'Machine')).toBe('<none>');
  });

  it('ends on every chain, cycles and any length included, after at most MAX_CHAIN_LENGTH links', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 20 }), fc.option(fc.nat(19)), async (length, back) => {
        // Objects o0 <- o1 <- … ; the last one points back to o<back> when given (a cycle), else has no owner.
        const objects = Array.from({ length }, (_, index) => index);
        const build = (index: number): ChainObject => {
          const next = index + 1 < length ? index + 1 : back === null ? undefined : back % length;
          return object(
            'Thing',
            `o${index}`,
            `u${index}`,
            next === undefined ? undefined : { kind: 'Thing', name: `o${next}`, uid: `u${next}` },
          );
        };
        const all = objects.map(build);
        const chain = await walkOwnerChain(all[0] ?? build(0), lookupIn(all));
        expect(chain.length).toBeLessThanOrEqual(MAX_CHAIN_LENGTH);
        if (back === null) expect(chain.length).toBe(Math.min(length - 1, MAX_CHAIN_LENGTH));
      }),
    );
  });
});
