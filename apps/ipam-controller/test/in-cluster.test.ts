import {
  GLOBAL_IN_CLUSTER_IP_POOL_KIND,
  GLOBAL_IN_CLUSTER_PREFIX_POOL_KIND,
  IN_CLUSTER_IP_POOL_KIND,
  IN_CLUSTER_PREFIX_POOL_KIND,
  IN_CLUSTER_PROTECT_ADDRESS_FINALIZER,
  IN_CLUSTER_V1ALPHA2_API_VERSION,
  IPAM_GROUP,
} from '@tally-ipam/api-types';
import { asKubeApiError } from '@tally-ipam/controller-kit';
import {
  ADDRESS_RESOURCE,
  CLAIM_RESOURCE,
  inClusterPoolWebhookConfiguration,
  inClusterPoolWebhookName,
  inClusterPoolWebhookPath,
  POOL_RESOURCES,
} from '@tally-ipam/ipam-provider';
import { describe, expect, it } from 'vitest';
import { useFlaggedController } from './flagged-controller.js';
import { eventually } from './support.js';

const POOLS = POOL_RESOURCES[IN_CLUSTER_IP_POOL_KIND];
const WEBHOOK_NAME = inClusterPoolWebhookName(IN_CLUSTER_IP_POOL_KIND);
const PREFIX_POOLS = POOL_RESOURCES[IN_CLUSTER_PREFIX_POOL_KIND];
const PREFIX_WEBHOOK_NAME = inClusterPoolWebhookName(IN_CLUSTER_PREFIX_POOL_KIND);

/** The API server's answer to a write: the error's HTTP code and message, or undefined when it was accepted. */
async function refusalOf(write: Promise<unknown>): Promise<{ code: number; message: string } | undefined> {
  const outcome = await write.then(
    () => undefined,
    (error: unknown) => error,
  );
  if (outcome === undefined) return undefined;
  const error = asKubeApiError(outcome);
  if (!error) throw outcome;
  return { code: error.statusCode, message: error.serverMessage ?? '' };
}

/**
 * `--enable-in-cluster-ipam` through the built executable: a claim of an InClusterIPPool served, and the pool
 * webhook answered by the app's webhook server with the reference's verdicts and HTTP statuses (row 11 of
 * docs/design/in-cluster-drop-in.md: 422 for the spec rules, 400 for the update and delete rules); the same for the
 * prefix pool kinds.
 */
describe('tally-ipam-controller --enable-in-cluster-ipam', () => {
  const file = useFlaggedController('in-cluster-flag', '--enable-in-cluster-ipam');

  it('serves a claim of an InClusterIPPool with the lowest free address and the reference finalizer', async () => {
    const { client, namespace } = file();
    await client.create(POOLS, {
      apiVersion: IN_CLUSTER_V1ALPHA2_API_VERSION,
      kind: IN_CLUSTER_IP_POOL_KIND,
      metadata: { name: 'nodes', namespace: namespace },
      spec: { addresses: ['10.220.0.10-10.220.0.20'], prefix: 24, gateway: '10.220.0.1' },
    });
    await client.create(CLAIM_RESOURCE, {
      apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
      kind: 'IPAddressClaim',
      metadata: { name: 'node-0', namespace: namespace },
      spec: { poolRef: { apiGroup: IPAM_GROUP, kind: IN_CLUSTER_IP_POOL_KIND, name: 'nodes' } },
    });
    const address = await eventually('the IPAddress of node-0', () =>
      client.get(ADDRESS_RESOURCE, { namespace: namespace, name: 'node-0' }),
    );
    expect(address.spec).toMatchObject({ address: '10.220.0.10', prefix: 24, gateway: '10.220.0.1' });
    expect(address.metadata.finalizers).toEqual([IN_CLUSTER_PROTECT_ADDRESS_FINALIZER]);
  });

  it('answers the pool webhook: 422 for a spec rule, 400 for shrinking under an IPAddress and for deleting it', async () => {
    const { client, namespace } = file();
    expect(await file().servedWebhookPaths()).toContain(inClusterPoolWebhookPath(IN_CLUSTER_IP_POOL_KIND));
    await file().registerWebhooks(inClusterPoolWebhookConfiguration);

    // A spec rule (mixed families): 422 Invalid, once the configuration is in effect.
    const invalid = await eventually('the webhook configuration in effect', async () => {
      const refusal = await refusalOf(
        client.create(
          POOLS,
          {
            apiVersion: IN_CLUSTER_V1ALPHA2_API_VERSION,
            kind: IN_CLUSTER_IP_POOL_KIND,
            metadata: { name: 'mixed', namespace: namespace },
            spec: { addresses: ['10.221.0.10', 'fd00::10'], prefix: 24 },
          },
          { dryRun: 'All' },
        ),
      );
      if (!refusal?.message.includes(WEBHOOK_NAME))
        throw new Error(`not refused by the webhook yet: ${refusal?.message}`);
      return refusal;
    });
    expect(invalid.code).toBe(422);
    expect(invalid.message).toContain('spec.addresses: provided addresses are of mixed IP families');
    // The cluster-scoped kind has its own webhook on its own path, with the same rules.
    const global = await refusalOf(
      client.create(
        POOL_RESOURCES[GLOBAL_IN_CLUSTER_IP_POOL_KIND],
        {
          apiVersion: IN_CLUSTER_V1ALPHA2_API_VERSION,
          kind: GLOBAL_IN_CLUSTER_IP_POOL_KIND,
          metadata: { name: `in-cluster-flag-${namespace}` },
          spec: { addresses: [], prefix: 24 },
        },
        { dryRun: 'All' },
      ),
    );
    expect(global?.code).toBe(422);
    expect(global?.message).toContain(inClusterPoolWebhookName(GLOBAL_IN_CLUSTER_IP_POOL_KIND));
    expect(global?.message).toContain('spec.addresses: addresses is required');

    // The update rule: node-0's 10.220.0.10 must stay in the pool: 400 BadRequest. Dry-run merge patches, not
    // updates of an object read here: the controller writes the pool meanwhile (finalizer, status), and an update
    // carrying the resourceVersion read would be refused 409 Conflict before any webhook sees it.
    const nodes = { namespace: namespace, name: 'nodes' };
    const shrunk = await refusalOf(
      client.mergePatch(POOLS, nodes, { spec: { addresses: ['10.220.0.11-10.220.0.20'] } }, { dryRun: 'All' }),
    );
    expect(shrunk?.code).toBe(400);
    expect(shrunk?.message).toContain(WEBHOOK_NAME);
    expect(shrunk?.message).toContain('pool addresses do not contain allocated addresses: ["10.220.0.10"]');
    // A change that keeps it is admitted.
    const grown = { spec: { addresses: ['10.220.0.10-10.220.0.30'] } };
    expect(await refusalOf(client.mergePatch(POOLS, nodes, grown, { dryRun: 'All' }))).toBeUndefined();

    // The delete rule: the pool still has an IPAddress: 400 BadRequest.
    const deleted = await refusalOf(client.delete(POOLS, { namespace: namespace, name: 'nodes' }, { dryRun: 'All' }));
    expect(deleted?.code).toBe(400);
    expect(deleted?.message).toContain('Pool has IPAddresses allocated (1)');
  });

  it('serves an InClusterPrefixPool and answers its webhook: 422 for a spec rule, 400 for the update and delete rules', async () => {
    const { client, namespace } = file();
    const paths = await file().servedWebhookPaths();
    expect(paths).toContain(inClusterPoolWebhookPath(IN_CLUSTER_PREFIX_POOL_KIND));
    expect(paths).toContain(inClusterPoolWebhookPath(GLOBAL_IN_CLUSTER_PREFIX_POOL_KIND));
    // The configuration the previous test registered has all four kinds' webhooks; a valid pool is admitted.
    await client.create(PREFIX_POOLS, {
      apiVersion: IN_CLUSTER_V1ALPHA2_API_VERSION,
      kind: IN_CLUSTER_PREFIX_POOL_KIND,
      metadata: { name: 'nets', namespace },
      spec: { prefixes: ['fd20::/62'], gateway: 'fd20::1' },
    });
    await client.create(CLAIM_RESOURCE, {
      apiVersion: 'ipam.cluster.x-k8s.io/v1beta2',
      kind: 'IPAddressClaim',
      metadata: { name: 'net-0', namespace },
      spec: { poolRef: { apiGroup: IPAM_GROUP, kind: IN_CLUSTER_PREFIX_POOL_KIND, name: 'nets' } },
    });
    const address = await eventually('the IPAddress of net-0', () =>
      client.get(ADDRESS_RESOURCE, { namespace, name: 'net-0' }),
    );
    expect(address.spec).toMatchObject({ address: 'fd20::', prefix: 64, gateway: 'fd20::1' });
    expect(address.metadata.finalizers).toEqual([IN_CLUSTER_PROTECT_ADDRESS_FINALIZER]);

    // A spec rule (an IPv4 prefix): 422 Invalid.
    const invalid = await refusalOf(
      client.create(
        PREFIX_POOLS,
        {
          apiVersion: IN_CLUSTER_V1ALPHA2_API_VERSION,
          kind: IN_CLUSTER_PREFIX_POOL_KIND,
          metadata: { name: 'v4', namespace },
          spec: { prefixes: ['10.222.0.0/16'], allocationPrefixLength: 24 },
        },
        { dryRun: 'All' },
      ),
    );
    expect(invalid?.code).toBe(422);
    expect(invalid?.message).toContain(PREFIX_WEBHOOK_NAME);
    expect(invalid?.message).toContain('spec.prefixes: only IPv6 prefixes are supported');
    // The cluster-scoped kind, on its own path.
    const global = await refusalOf(
      client.create(
        POOL_RESOURCES[GLOBAL_IN_CLUSTER_PREFIX_POOL_KIND],
        {
          apiVersion: IN_CLUSTER_V1ALPHA2_API_VERSION,
          kind: GLOBAL_IN_CLUSTER_PREFIX_POOL_KIND,
          metadata: { name: `in-cluster-flag-${namespace}` },
          spec: { prefixes: [] },
        },
        { dryRun: 'All' },
      ),
    );
    expect(global?.code).toBe(422);
    expect(global?.message).toContain(inClusterPoolWebhookName(GLOBAL_IN_CLUSTER_PREFIX_POOL_KIND));
    expect(global?.message).toContain('spec.prefixes: prefixes is required');

    // The update rules, after the spec rules (a /56 would be shorter than the /62 prefix: 422 first, as in the
    // reference): the allocation length is immutable, and net-0's fd20::/64 must stay allocatable: 400.
    // Dry-run merge patches, for the reason given for the IP pool above.
    const nets = { namespace, name: 'nets' };
    const relengthed = await refusalOf(
      client.mergePatch(PREFIX_POOLS, nets, { spec: { allocationPrefixLength: 63 } }, { dryRun: 'All' }),
    );
    expect(relengthed?.code).toBe(400);
    expect(relengthed?.message).toContain('spec.allocationPrefixLength is immutable (was 64)');
    const excluded = await refusalOf(
      client.mergePatch(PREFIX_POOLS, nets, { spec: { excludedPrefixes: ['fd20::5'] } }, { dryRun: 'All' }),
    );
    expect(excluded?.code).toBe(400);
    expect(excluded?.message).toContain(PREFIX_WEBHOOK_NAME);
    expect(excluded?.message).toContain('existing allocations become non-allocatable');
    expect(excluded?.message).toContain('["fd20::"]');
    // An exclusion that leaves it is admitted.
    const kept = { spec: { excludedPrefixes: ['fd20:0:0:3::/64'] } };
    expect(await refusalOf(client.mergePatch(PREFIX_POOLS, nets, kept, { dryRun: 'All' }))).toBeUndefined();

    // The delete rule: the pool still has an IPAddress: 400 BadRequest.
    const deleted = await refusalOf(client.delete(PREFIX_POOLS, { namespace, name: 'nets' }, { dryRun: 'All' }));
    expect(deleted?.code).toBe(400);
    expect(deleted?.message).toContain('Pool has IPAddresses allocated (1)');
  });
});
