import type { AdmissionRequest } from '@tally-ipam/controller-kit';
import { describe, expect, it } from 'vitest';
import {
  type PoolAllocationRecord,
  type PoolAllocationsView,
  type PoolKindInfo,
  poolAdmissionHandler,
} from '../src/index.js';
import { POOL_KINDS } from '../src/webhooks/pool-kinds.js';

/**
 * A pool whose stored object no longer parses (a schema that tightened under it, or a hand edit made before the webhook
 * ran) must still be fixable and deletable: the pool handler never requires `oldObject` to parse. Pure: the handler is
 * called directly with an in-memory view of the pool's allocations.
 */

const IP_POOL = POOL_KINDS.find((kind) => kind.kind === 'TallyIPPool') as PoolKindInfo;

function viewWith(allocations: readonly PoolAllocationRecord[]): PoolAllocationsView {
  return { addressesOf: async () => allocations, listPools: async () => [] };
}

function pool(spec: Record<string, unknown>, metadata: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    apiVersion: 'ipam.cluster.x-k8s.io/v1alpha1',
    kind: 'TallyIPPool',
    metadata: { name: 'broken', namespace: 'team', uid: 'u', resourceVersion: '7', ...metadata },
    spec,
  };
}

function review(operation: AdmissionRequest['operation'], object: unknown, oldObject: unknown): AdmissionRequest {
  return {
    uid: 'unparsable',
    kind: { group: 'ipam.cluster.x-k8s.io', version: 'v1alpha1', kind: 'TallyIPPool' },
    resource: { group: 'ipam.cluster.x-k8s.io', version: 'v1alpha1', resource: IP_POOL.plural },
    name: 'broken',
    namespace: 'team',
    operation,
    userInfo: {},
    object,
    oldObject,
    dryRun: false,
    options: undefined,
  };
}

const VALID_SPEC = { addresses: ['10.0.0.10-10.0.0.20'], prefix: 24, gateway: '10.0.0.1' };
/** Stored objects that no longer parse, each broken in a different place. */
const UNPARSABLE_OLD = [
  ['a prefix far out of range', pool({ ...VALID_SPEC, prefix: -(2 ** 30) })],
  ['addresses that are not a list', pool({ ...VALID_SPEC, addresses: '10.0.0.10-10.0.0.20' })],
  ['an address that is not an address', pool({ ...VALID_SPEC, addresses: ['10.0.0.300'] })],
  ['no spec at all', { ...pool(VALID_SPEC), spec: 'gone' }],
] as const;
/** An allocation the old (unparsable) object may have handed out that the fixed spec no longer holds. */
const OUTSIDE_FIXED_SPEC: PoolAllocationRecord = { address: '10.0.0.99', prefix: 24, claimName: 'old-claim' };

describe('pool admission of a pool whose stored object no longer parses', () => {
  it.each(UNPARSABLE_OLD)('an UPDATE that fixes it is allowed (stored object has %s)', async (_, oldObject) => {
    const handler = poolAdmissionHandler(IP_POOL, viewWith([OUTSIDE_FIXED_SPEC]));
    const decision = await handler(review('UPDATE', pool(VALID_SPEC), oldObject));
    expect(decision.status?.message).toBeUndefined();
    expect(decision.allowed).toBe(true);
  });

  it('an UPDATE that is still invalid is refused, naming the field', async () => {
    const handler = poolAdmissionHandler(IP_POOL, viewWith([]));
    const decision = await handler(review('UPDATE', pool({ ...VALID_SPEC, prefix: 33 }), UNPARSABLE_OLD[0][1]));
    expect(decision.allowed).toBe(false);
    expect(decision.status?.code).toBe(422);
    expect(decision.status?.message).toContain('spec.prefix');
  });

  it.each(UNPARSABLE_OLD)('a DELETE is allowed when it holds no addresses (stored object has %s)', async (_, old) => {
    const decision = await poolAdmissionHandler(IP_POOL, viewWith([]))(review('DELETE', undefined, old));
    expect(decision.status?.message).toBeUndefined();
    expect(decision.allowed).toBe(true);
  });

  it('a DELETE is allowed even when the stored metadata does not parse', async () => {
    const old = pool(VALID_SPEC, { labels: 'not-a-map', annotations: 5 });
    const decision = await poolAdmissionHandler(IP_POOL, viewWith([]))(review('DELETE', undefined, old));
    expect(decision.allowed).toBe(true);
  });

  it('a DELETE of an unparsable pool that still holds addresses is refused, naming the pool', async () => {
    const handler = poolAdmissionHandler(IP_POOL, viewWith([OUTSIDE_FIXED_SPEC]));
    const decision = await handler(review('DELETE', undefined, UNPARSABLE_OLD[0][1]));
    expect(decision.allowed).toBe(false);
    expect(decision.status?.message).toContain('TallyIPPool team/broken');
    expect(decision.status?.message).toContain('10.0.0.99');
  });
});
