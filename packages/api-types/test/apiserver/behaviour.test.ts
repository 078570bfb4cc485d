import { CustomObjectsApi, setHeaderOptions } from '@kubernetes/client-node';
import { createTestNamespace, type TestNamespace } from '@tally-ipam/testenv';
import { testEnv } from '@tally-ipam/testenv/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  IPAM_V1BETA2_API_VERSION,
  parseGlobalTallyIPPool,
  parseIPAddress,
  parseIPAddressClaim,
  parseTallyIPPool,
  parseTallyPrefixPool,
} from '../../src/index.js';
import { ipPool, type PoolManifest, prefixPool } from '../fixtures/pools.js';
import { createObject, deleteObject, replaceObject, replaceStatus, type ServerAnswer } from './client.js';

let namespace: TestNamespace;

beforeAll(async () => {
  namespace = await createTestNamespace(testEnv().kubeConfig, 'api-types-behaviour');
});
afterAll(async () => {
  await namespace?.delete();
});

function named(manifest: PoolManifest, name: string): PoolManifest {
  return { ...manifest, metadata: { ...manifest.metadata, name } };
}

function stored(answer: ServerAnswer): Record<string, unknown> {
  if (!answer.accepted) throw new Error(`the API server refused: ${answer.message}`);
  return answer.object;
}

/** Creates for real and returns the stored object. */
async function persist(manifest: PoolManifest): Promise<Record<string, unknown>> {
  return stored(await createObject(testEnv().kubeConfig, manifest, namespace.name, { persist: true }));
}

describe('pruning and defaults', () => {
  it('drops unknown fields at every level, fills the strategy default, and the result parses', async () => {
    const manifest = ipPool({
      addresses: ['10.1.0.10-10.1.0.20'],
      prefix: 24,
      colour: 'blue',
      reservations: [{ claimName: 'cp-0', address: '10.1.0.10', note: 'first' }],
    });
    const object = await persist(named(manifest, 'pruned'));
    expect(object.spec).toEqual({
      addresses: ['10.1.0.10-10.1.0.20'],
      prefix: 24,
      allocationStrategy: 'LowestFree',
      reservations: [{ claimName: 'cp-0', address: '10.1.0.10' }],
    });
    const parsed = parseTallyIPPool(object);
    expect(parsed.success).toBe(true);
  });
});

describe('status is a subresource', () => {
  it('the main resource ignores status; /status stores it and ignores spec', async () => {
    const kc = testEnv().kubeConfig;
    const created = await persist(named(ipPool({ addresses: ['10.2.0.0/28'], prefix: 24 }), 'with-status'));
    const counts = { total: 14, used: 1, free: 13, outOfRange: 0 };
    const condition = {
      type: 'Ready',
      status: 'True',
      reason: 'PoolReady',
      message: '',
      lastTransitionTime: '2026-11-22T10:00:00Z',
    };
    const viaMain = stored(
      await replaceObject(
        kc,
        { ...(created as unknown as PoolManifest), status: { ipAddresses: counts } },
        namespace.name,
      ),
    );
    expect(viaMain.status).toBeUndefined();

    const withStatus = {
      ...(viaMain as unknown as PoolManifest),
      spec: { addresses: ['10.2.0.0/27'], prefix: 24 },
      status: { ipAddresses: counts, conditions: [condition], observedGeneration: 1 },
    };
    const viaStatus = stored(await replaceStatus(kc, withStatus, namespace.name));
    expect(viaStatus.status).toEqual({ ipAddresses: counts, conditions: [condition], observedGeneration: 1 });
    expect((viaStatus.spec as { addresses: string[] }).addresses).toEqual(['10.2.0.0/28']);
    const parsed = parseTallyIPPool(viaStatus);
    expect(parsed.success && parsed.data.status?.ipAddresses).toEqual(counts);
  });

  it('refuses a negative count in status, naming the field', async () => {
    const kc = testEnv().kubeConfig;
    const created = await persist(named(ipPool({ addresses: ['10.3.0.0/28'], prefix: 24 }), 'bad-status'));
    const answer = await replaceStatus(
      kc,
      {
        ...(created as unknown as PoolManifest),
        status: { ipAddresses: { total: 1, used: -1, free: 2, outOfRange: 0 } },
      },
      namespace.name,
    );
    expect(answer).toMatchObject({ accepted: false, code: 422 });
    expect(!answer.accepted && answer.message).toContain('status.ipAddresses.used: Invalid value: -1');
  });

  it('refuses a count a JavaScript reader could not get back exactly (above 2^53 - 1)', async () => {
    const kc = testEnv().kubeConfig;
    const created = await persist(named(ipPool({ addresses: ['fd00:7::/64'], prefix: 64 }), 'huge-status'));
    const tooBig = 2 ** 53;
    const answer = await replaceStatus(
      kc,
      {
        ...(created as unknown as PoolManifest),
        status: { ipAddresses: { total: tooBig, used: 0, free: tooBig, outOfRange: 0 } },
      },
      namespace.name,
    );
    expect(answer).toMatchObject({ accepted: false, code: 422 });
    expect(!answer.accepted && answer.message).toContain('status.ipAddresses.total: Invalid value: 9007199254740992');
  });
});

describe('immutable fields', () => {
  it('refuses a prefix change, showing old and new value, and allows growing the pool', async () => {
    const kc = testEnv().kubeConfig;
    const created = (await persist(
      named(ipPool({ addresses: ['10.4.0.10-10.4.0.20'], prefix: 24 }), 'fixed-prefix'),
    )) as unknown as PoolManifest;
    const changed = await replaceObject(kc, { ...created, spec: { ...created.spec, prefix: 25 } }, namespace.name);
    expect(changed).toMatchObject({ accepted: false, code: 422 });
    expect(!changed.accepted && changed.message).toContain('spec.prefix: Forbidden: prefix is immutable');
    expect(!changed.accepted && changed.message).toContain('was 24, now 25');

    const grown = await replaceObject(
      kc,
      { ...created, spec: { ...created.spec, addresses: ['10.4.0.10-10.4.0.20', '10.4.0.100'] } },
      namespace.name,
    );
    expect(grown.accepted).toBe(true);
  });

  it('refuses switching a pool to the other IP family', async () => {
    const kc = testEnv().kubeConfig;
    const created = (await persist(
      named(ipPool({ addresses: ['10.5.0.1'], prefix: 24 }), 'fixed-family'),
    )) as unknown as PoolManifest;
    const answer = await replaceObject(
      kc,
      { ...created, spec: { ...created.spec, addresses: ['fd00::1'] } },
      namespace.name,
    );
    expect(answer).toMatchObject({ accepted: false, code: 422 });
    expect(!answer.accepted && answer.message).toContain(
      'spec.addresses: Forbidden: the IP family of a pool is immutable: it was IPv4; create a new pool for IPv6',
    );
  });

  it('refuses an allocationPrefixLength change on a prefix pool', async () => {
    const kc = testEnv().kubeConfig;
    const created = (await persist(
      named(prefixPool({ prefixes: ['fd00:5::/48'], allocationPrefixLength: 64 }), 'fixed-size'),
    )) as unknown as PoolManifest;
    const answer = await replaceObject(
      kc,
      { ...created, spec: { ...created.spec, allocationPrefixLength: 56 } },
      namespace.name,
    );
    expect(answer).toMatchObject({ accepted: false, code: 422 });
    expect(!answer.accepted && answer.message).toContain(
      'spec.allocationPrefixLength: Forbidden: allocationPrefixLength is immutable (allocated prefixes have this size): was 64, now 56',
    );
    expect(parseTallyPrefixPool(created).success).toBe(true);
  });

  it('cluster-scoped pools are created without a namespace and deleted again', async () => {
    const kc = testEnv().kubeConfig;
    const global = named(
      ipPool({ addresses: ['10.6.0.0/24'], prefix: 24 }, 'GlobalTallyIPPool'),
      `global-${namespace.name}`,
    );
    const object = stored(await createObject(kc, global, namespace.name, { persist: true }));
    expect((object.metadata as { namespace?: string }).namespace).toBeUndefined();
    expect((await deleteObject(kc, global, namespace.name)).accepted).toBe(true);
  });
});

describe('tenancy on global pools', () => {
  it('stores a namespaceSelector and a cap that parse, and refuses a requirement without its values in both', async () => {
    const kc = testEnv().kubeConfig;
    const tenancy = {
      namespaceSelector: {
        matchLabels: { tier: 'gold' },
        matchExpressions: [
          { key: 'team', operator: 'In', values: ['a', 'b'] },
          { key: 'frozen', operator: 'DoesNotExist' },
        ],
      },
      maxAddressesPerNamespace: 3,
    };
    const global = named(
      ipPool({ addresses: ['10.6.1.0/24'], prefix: 24, ...tenancy }, 'GlobalTallyIPPool'),
      `tenancy-${namespace.name}`,
    );
    const object = stored(await createObject(kc, global, namespace.name, { persist: true }));
    expect(object.spec).toMatchObject(tenancy);
    expect(parseGlobalTallyIPPool(object).success).toBe(true);
    expect((await deleteObject(kc, global, namespace.name)).accepted).toBe(true);

    const bad = named(
      ipPool(
        {
          addresses: ['10.6.2.0/24'],
          prefix: 24,
          namespaceSelector: { matchExpressions: [{ key: 'team', operator: 'In' }] },
        },
        'GlobalTallyIPPool',
      ),
      `tenancy-bad-${namespace.name}`,
    );
    const refused = await createObject(kc, bad, namespace.name);
    expect(!refused.accepted && refused.message).toContain(
      'spec.namespaceSelector.matchExpressions[0].values: Invalid value: "object": operator In needs at least one value',
    );
    const parsed = parseGlobalTallyIPPool({ ...bad, metadata: { name: 'x' } });
    expect(parsed.success ? '' : parsed.error.message).toContain('operator In needs at least one value');
  });
});

describe('kubectl get columns', () => {
  it('shows addresses, counts, readiness and age', async () => {
    const kc = testEnv().kubeConfig;
    const api = kc.makeApiClient(CustomObjectsApi);
    await persist(named(ipPool({ addresses: ['10.7.0.0/28'], prefix: 24 }), 'columns'));
    const table = (await api.getNamespacedCustomObject(
      {
        group: 'ipam.cluster.x-k8s.io',
        version: 'v1alpha1',
        namespace: namespace.name,
        plural: 'tallyippools',
        name: 'columns',
      },
      setHeaderOptions('Accept', 'application/json;as=Table;v=v1;g=meta.k8s.io'),
    )) as { kind: string; columnDefinitions: { name: string; priority: number }[]; rows: { cells: unknown[] }[] };
    expect(table.kind).toBe('Table');
    expect(table.columnDefinitions.filter((column) => column.priority === 0).map((column) => column.name)).toEqual([
      'Name',
      'Addresses',
      'Total',
      'Used',
      'Free',
      'Ready',
      'Age',
    ]);
    expect(table.rows[0]?.cells.slice(0, 2)).toEqual(['columns', '["10.7.0.0/28"]']);
  });
});

describe('CAPI objects as the real API server returns them parse with the CAPI schemas', () => {
  it('IPAddressClaim and IPAddress (v1beta2)', async () => {
    const kc = testEnv().kubeConfig;
    const poolRef = { apiGroup: 'ipam.cluster.x-k8s.io', kind: 'TallyIPPool', name: 'workers-v4' };
    const claim = parse(`
apiVersion: ${IPAM_V1BETA2_API_VERSION}
kind: IPAddressClaim
metadata: { name: vm-0-0, labels: { cluster.x-k8s.io/cluster-name: prod } }
spec: { clusterName: prod, poolRef: ${JSON.stringify(poolRef)} }
`) as PoolManifest;
    const storedClaim = stored(await createObject(kc, claim, namespace.name, { persist: true }));
    const parsedClaim = parseIPAddressClaim(storedClaim);
    expect(parsedClaim.success ? parsedClaim.data.spec.poolRef : parsedClaim.error.message).toEqual(poolRef);

    const address: PoolManifest = {
      apiVersion: IPAM_V1BETA2_API_VERSION,
      kind: 'IPAddress',
      metadata: { name: 'vm-0-0' },
      spec: { claimRef: { name: 'vm-0-0' }, poolRef, address: 'fd00:10::100', prefix: 64, gateway: 'fd00:10::1' },
    };
    const storedAddress = stored(await createObject(kc, address, namespace.name, { persist: true }));
    const parsedAddress = parseIPAddress(storedAddress);
    expect(parsedAddress.success ? parsedAddress.data.spec.address : parsedAddress.error.message).toBe('fd00:10::100');
  });
});

describe('the CEL rules fit the runtime cost budget at the schema limits', () => {
  const hex = (n: number): string => n.toString(16).padStart(4, '0');
  /** Longest legal notation: every group written out, four digits each. */
  const fullV6 = (low: number): string => `fd00:0000:0000:0000:0000:0000:${hex(low >> 8)}:${hex(low & 0xff)}`;

  it('admits an IPv6 pool with 128 long ranges, 128 exclusions and 128 reservations', async () => {
    const addresses = Array.from({ length: 128 }, (_, i) => `${fullV6(i * 2)}-${fullV6(i * 2 + 1)}`);
    const excludedAddresses = Array.from({ length: 128 }, (_, i) => `${fullV6(i * 2)}-${fullV6(i * 2)}`);
    const reservations = Array.from({ length: 128 }, (_, i) => ({
      claimName: `claim-${i}`,
      address: fullV6(i * 2 + 1),
    }));
    const manifest = named(
      ipPool({ addresses, prefix: 64, gateway: fullV6(0xffff), excludedAddresses, reservations }),
      'largest-v6',
    );
    const answer = await createObject(testEnv().kubeConfig, manifest, namespace.name);
    expect(answer.accepted ? 'accepted' : answer.message).toBe('accepted');
    expect(parseTallyIPPool(manifest).success).toBe(true);
  });

  it('admits an IPv4 pool with 128 ranges and a prefix pool with 128 prefixes', async () => {
    const addresses = Array.from({ length: 128 }, (_, i) => `10.9.${i}.0-10.9.${i}.255`);
    const v4 = named(ipPool({ addresses, prefix: 16, excludedAddresses: addresses.slice(0, 128) }), 'largest-v4');
    const v4Answer = await createObject(testEnv().kubeConfig, v4, namespace.name);
    expect(v4Answer.accepted ? 'accepted' : v4Answer.message).toBe('accepted');

    const prefixes = Array.from({ length: 128 }, (_, i) => `fd00:0000:0000:${hex(i)}::/64`);
    const excludedPrefixes = Array.from({ length: 128 }, (_, i) => `${fullV6(i)}-${fullV6(i + 1)}`);
    const pool = named(prefixPool({ prefixes, allocationPrefixLength: 80, excludedPrefixes }), 'largest-prefixes');
    const poolAnswer = await createObject(testEnv().kubeConfig, pool, namespace.name);
    expect(poolAnswer.accepted ? 'accepted' : poolAnswer.message).toBe('accepted');
  });
});
