import { CustomObjectsApi } from '@kubernetes/client-node';
import { testEnv } from '@tally-ipam/testenv/vitest';
import { afterAll, describe, expect, it } from 'vitest';
import { parseMetal3IPAddress, parseMetal3IPClaim, parseMetal3IPPool } from '../../src/index.js';
import { MALFORMED_METAL3_OBJECTS, type Metal3Manifest, proposalExample } from '../fixtures/metal3.js';
import { createObject, deleteObject, replaceObject, replaceStatus, type ServerAnswer } from './client.js';

/** The proposal's examples name the `default` namespace; only this file creates Metal3 objects there. */
const NAMESPACE = 'default';
const created: Metal3Manifest[] = [];

afterAll(async () => {
  for (const manifest of created.reverse()) await deleteObject(testEnv().kubeConfig, manifest, NAMESPACE);
});

function stored(answer: ServerAnswer): Record<string, unknown> {
  if (!answer.accepted) throw new Error(`the API server refused: ${answer.message}`);
  return answer.object;
}

async function persist(manifest: Metal3Manifest): Promise<Record<string, unknown>> {
  const object = stored(await createObject(testEnv().kubeConfig, manifest, NAMESPACE, { persist: true }));
  created.push(manifest);
  return object;
}

function uidOf(object: Record<string, unknown>): string {
  return String((object.metadata as { uid: string }).uid);
}

describe('the proposal examples, verbatim', () => {
  // No API server can store them: object names are lower-case and owner references need the owner's uid. These are
  // refusals of core metadata validation (and, for the IPAddress, of the published API's field names), not of Tally.
  it('IPPool: refused only for its owner reference without uid', async () => {
    const answer = await createObject(testEnv().kubeConfig, proposalExample('ippool'), NAMESPACE);
    expect(answer).toMatchObject({ accepted: false, code: 422 });
    if (answer.accepted) return;
    expect(answer.message).toContain('metadata.ownerReferences.uid: Invalid value: "": must not be empty');
    expect(answer.message).not.toContain('spec.');
  });

  it('IPClaim: refused for its upper-case name and its owner reference without uid', async () => {
    const answer = await createObject(testEnv().kubeConfig, proposalExample('ipclaim'), NAMESPACE);
    expect(answer).toMatchObject({ accepted: false, code: 422 });
    if (answer.accepted) return;
    expect(answer.message).toContain('metadata.name: Invalid value: "RenderedData-1": a lowercase RFC 1123 subdomain');
    expect(answer.message).toContain('metadata.ownerReferences.uid: Invalid value: "": must not be empty');
  });

  it('IPAddress: refused for owner references without uid and, as Metal3 refuses it, `Address` is not `address`', async () => {
    const answer = await createObject(testEnv().kubeConfig, proposalExample('ipaddress'), NAMESPACE);
    expect(answer).toMatchObject({ accepted: false, code: 422 });
    if (answer.accepted) return;
    expect(answer.message).toContain('metadata.ownerReferences.uid: Invalid value: "": must not be empty');
    expect(answer.message).toContain('spec.address: Required value');
    expect(answer.message).toContain('spec.claim.name: Required value');
    expect(answer.message).toContain('spec.pool.name: Required value');
  });

  it('with strict field validation (kubectl apply), the unknown fields are named', async () => {
    const api = testEnv().kubeConfig.makeApiClient(CustomObjectsApi);
    const example = proposalExample('ipaddress');
    const error = await api
      .createNamespacedCustomObject({
        group: 'ipam.metal3.io',
        version: 'v1alpha1',
        plural: 'ipaddresses',
        namespace: NAMESPACE,
        body: { ...example, metadata: { name: example.metadata.name } },
        dryRun: 'All',
        fieldValidation: 'Strict',
      })
      .then(
        () => undefined,
        (failure: unknown) => String((failure as { body?: unknown }).body),
      );
    expect(error).toContain('unknown field \\"spec.Address\\"');
    expect(error).toContain('unknown field \\"spec.claim.Name\\"');
  });
});

describe('the proposal examples as a Metal3 user applies them', () => {
  // The smallest change that any API server needs: names lower-cased, owner references carrying the uid of an owner
  // that exists (the Metal3Cluster and the Data kind are not served here, so those two are dropped), and the
  // IPAddress's `Name`/`Address` keys written as the published API spells them. The IPPool spec is unchanged.
  it('stores pool, claim and address, keeps every spec field Metal3 defines, drops the rest, and parses', async () => {
    const poolExample = proposalExample('ippool');
    const pool = await persist({ ...poolExample, metadata: { name: 'pool-1', namespace: NAMESPACE } });
    expect(pool.spec).toEqual(poolExample.spec);
    expect(pool.status).toBeUndefined();
    expect(parseMetal3IPPool(pool).success).toBe(true);

    const claimExample = proposalExample('ipclaim');
    const claim = await persist({ ...claimExample, metadata: { name: 'rendereddata-1', namespace: NAMESPACE } });
    // `spec.owner` is not part of Metal3's IPClaim (v1.10.1): pruned.
    expect(claim.spec).toEqual({ pool: { name: 'pool-1' } });
    expect(claim.status).toBeUndefined();
    expect(parseMetal3IPClaim(claim).success).toBe(true);

    const addressExample = proposalExample('ipaddress');
    const exampleSpec = addressExample.spec as { claim: { Name: string }; Address: string; pool: { Name: string } };
    const ownerReferences = [
      { apiVersion: 'ipam.metal3.io/v1alpha1', kind: 'IPPool', name: 'pool-1', uid: uidOf(pool) },
      { apiVersion: 'ipam.metal3.io/v1alpha1', kind: 'IPClaim', name: 'rendereddata-1', uid: uidOf(claim) },
    ];
    const address = await persist({
      ...addressExample,
      metadata: { name: addressExample.metadata.name, namespace: NAMESPACE, ownerReferences },
      spec: {
        claim: { name: exampleSpec.claim.Name.toLowerCase() },
        address: exampleSpec.Address,
        prefix: 24,
        gateway: '192.168.0.1',
        pool: { name: exampleSpec.pool.Name },
      },
    });
    expect(address.spec).toEqual({
      claim: { name: 'rendereddata-1' },
      address: '192.168.0.11',
      prefix: 24,
      gateway: '192.168.0.1',
      pool: { name: 'pool-1' },
    });
    // IPAddress has no status in Metal3's API: the example's `status.ready` is pruned.
    expect(address.status).toBeUndefined();
    expect((address.metadata as { ownerReferences: unknown[] }).ownerReferences).toMatchObject(ownerReferences);
    expect(parseMetal3IPAddress(address).success).toBe(true);
  });

  it('status is written through /status with Metal3 wire names: `indexes` (Go Allocations) and `address`', async () => {
    const kc = testEnv().kubeConfig;
    const poolNow = stored(
      await replaceStatus(
        kc,
        {
          ...(await readBack('ippools', 'pool-1')),
          status: {
            ...proposalExample('ippool').status,
            indexes: { 'rendereddata-1': '192.168.0.11', 'RenderedData-10': '192.168.0.9' },
          },
        } as unknown as Metal3Manifest,
        NAMESPACE,
      ),
    );
    // The proposal's `allocations` is not the wire name (the Go field Allocations is tagged `indexes`): pruned.
    expect(poolNow.status).toEqual({
      lastUpdated: '2020-04-02T06:36:09Z',
      indexes: { 'rendereddata-1': '192.168.0.11', 'RenderedData-10': '192.168.0.9' },
    });
    expect(parseMetal3IPPool(poolNow).success).toBe(true);

    const claimNow = stored(
      await replaceStatus(
        kc,
        {
          ...(await readBack('ipclaims', 'rendereddata-1')),
          status: { ...proposalExample('ipclaim').status, address: { name: 'pool-1-192-168-0-11' } },
        } as unknown as Metal3Manifest,
        NAMESPACE,
      ),
    );
    // The proposal's `ipAddress` is `address` in the published API: pruned; errorMessage kept.
    expect(claimNow.status).toEqual({ address: { name: 'pool-1-192-168-0-11' }, errorMessage: '' });
    expect(parseMetal3IPClaim(claimNow).success).toBe(true);
  });

  it("Metal3's update rules: namePrefix, the claim's pool, the address's address, pool and claim are immutable", async () => {
    const kc = testEnv().kubeConfig;
    const pool = await readBack('ippools', 'pool-1');
    const renamed = await replaceObject(
      kc,
      { ...pool, spec: { ...(pool.spec as object), namePrefix: 'other' } } as unknown as Metal3Manifest,
      NAMESPACE,
    );
    expect(renamed).toMatchObject({ accepted: false, code: 422 });
    expect(!renamed.accepted && renamed.message).toContain(
      'spec.namePrefix: Forbidden: namePrefix is immutable (the names of the allocated IPAddresses derive from it): was provisioning, now other',
    );

    const claim = await readBack('ipclaims', 'rendereddata-1');
    const moved = await replaceObject(
      kc,
      { ...claim, spec: { pool: { name: 'pool-2' } } } as Metal3Manifest,
      NAMESPACE,
    );
    expect(!moved.accepted && moved.message).toContain(
      'spec.pool: Forbidden: pool is immutable: its name, namespace and kind cannot change (was pool-1, now pool-2)',
    );
    const annotated = await replaceObject(
      kc,
      { ...claim, spec: { pool: { name: 'pool-1', uid: 'any' } } } as Metal3Manifest,
      NAMESPACE,
    );
    expect(annotated).toMatchObject({ accepted: true });

    const address = await readBack('ipaddresses', 'pool-1-192-168-0-11');
    const spec = address.spec as Record<string, unknown>;
    for (const [change, message] of [
      [
        { address: '192.168.0.12' },
        'spec.address: Forbidden: address is immutable: an IPAddress is one allocation (was 192.168.0.11, now 192.168.0.12)',
      ],
      [{ pool: { name: 'pool-2' } }, 'spec.pool: Forbidden: pool is immutable'],
      [{ claim: { name: 'rendereddata-2' } }, 'spec.claim: Forbidden: claim is immutable'],
    ] as const) {
      const answer = await replaceObject(kc, { ...address, spec: { ...spec, ...change } } as Metal3Manifest, NAMESPACE);
      expect(!answer.accepted && answer.message).toContain(message);
    }
  });
});

async function readBack(plural: string, name: string): Promise<Metal3Manifest> {
  const api = testEnv().kubeConfig.makeApiClient(CustomObjectsApi);
  return (await api.getNamespacedCustomObject({
    group: 'ipam.metal3.io',
    version: 'v1alpha1',
    namespace: NAMESPACE,
    plural,
    name,
  })) as Metal3Manifest;
}

describe('malformed Metal3 objects are refused, naming the field and the value', () => {
  it.each(MALFORMED_METAL3_OBJECTS.map((entry) => [entry.name, entry] as const))('%s', async (_, entry) => {
    const answer = await createObject(testEnv().kubeConfig, entry.manifest, NAMESPACE);
    expect(answer).toMatchObject({ accepted: false, code: 422 });
    if (answer.accepted) return;
    expect(answer.message).toContain(`${entry.field}:`);
    expect(answer.message).toContain(entry.text);
  });
});

describe('objects at the schema limits stay inside the runtime CEL cost budget', () => {
  it('an IPPool with 128 IPv6 ranges (16 DNS servers each) and 128 pre-allocations is admitted', async () => {
    const hex = (n: number) => n.toString(16);
    const pools = Array.from({ length: 128 }, (_, i) => ({
      start: `fd00:0:0:${hex(i)}:ffff:ffff:ffff:0`,
      end: `fd00:0:0:${hex(i)}:ffff:ffff:ffff:ffff`,
      subnet: `fd00:0:0:${hex(i)}::/64`,
      prefix: 64,
      gateway: `fd00:0:0:${hex(i)}::1`,
      dnsServers: Array.from({ length: 16 }, (_, d) => `fd00:0:0:${hex(i)}::${hex(d + 2)}`),
    }));
    const preAllocations = Object.fromEntries(
      Array.from({ length: 128 }, (_, i) => [
        `claim-${'x'.repeat(200)}-${i}`,
        `fd00:0:0:${hex(i)}:ffff:ffff:ffff:${hex(i)}`,
      ]),
    );
    const manifest = {
      apiVersion: 'ipam.metal3.io/v1alpha1',
      kind: 'IPPool',
      metadata: { name: 'at-the-limits' },
      spec: { namePrefix: 'p'.repeat(213), pools, preAllocations, prefix: 64, dnsServers: pools[0]?.dnsServers },
    };
    const answer = await createObject(testEnv().kubeConfig, manifest, NAMESPACE);
    expect(answer.accepted ? 'accepted' : answer.message).toBe('accepted');
    expect(parseMetal3IPPool(manifest).success).toBe(true);
  });

  it('a pre-allocation claim name is at most 253 characters, emoji counted as one, by the API server and by zod', async () => {
    const pool = (claim: string) => ({
      apiVersion: 'ipam.metal3.io/v1alpha1',
      kind: 'IPPool',
      metadata: { name: 'astral-claim' },
      spec: {
        namePrefix: 'p',
        pools: [{ start: '10.0.0.10', end: '10.0.0.50', subnet: '10.0.0.0/24' }],
        preAllocations: { [claim]: '10.0.0.11' },
      },
    });
    // 253 characters, 303 UTF-16 units.
    const fits = `${'x'.repeat(203)}${'\u{1F600}'.repeat(50)}`;
    const admitted = await createObject(testEnv().kubeConfig, pool(fits), NAMESPACE);
    expect(admitted.accepted ? 'accepted' : admitted.message).toBe('accepted');
    const parsed = parseMetal3IPPool(pool(fits));
    expect(parsed.success ? 'parsed' : parsed.error.message).toBe('parsed');

    const tooLong = `${fits}\u{1F600}`;
    const refused = await createObject(testEnv().kubeConfig, pool(tooLong), NAMESPACE);
    expect(!refused.accepted && refused.message).toContain('spec.preAllocations: ');
    const zod = parseMetal3IPPool(pool(tooLong));
    expect(zod.success).toBe(false);
    if (zod.success) return;
    expect(zod.error.issues.map((issue) => issue.path.slice(0, 'spec.preAllocations'.length))).toContain(
      'spec.preAllocations',
    );
  });

  it('one pre-allocation more is refused by the schema, naming the field', async () => {
    const preAllocations = Object.fromEntries(Array.from({ length: 129 }, (_, i) => [`c-${i}`, `10.0.${i}.1`]));
    const answer = await createObject(
      testEnv().kubeConfig,
      {
        apiVersion: 'ipam.metal3.io/v1alpha1',
        kind: 'IPPool',
        metadata: { name: 'too-many' },
        spec: { namePrefix: 'p', preAllocations },
      },
      NAMESPACE,
    );
    expect(!answer.accepted && answer.message).toContain(
      'spec.preAllocations: Too many: 129: must have at most 128 items',
    );
  });
});
