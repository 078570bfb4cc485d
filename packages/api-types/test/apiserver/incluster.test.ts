import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createTestNamespace, referenceIpamModuleDir, type TestNamespace } from '@tally-ipam/testenv';
import { testEnv } from '@tally-ipam/testenv/vitest';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  inClusterAddressSpace,
  parseGlobalInClusterIPPool,
  parseInClusterIPPool,
  parseInClusterPrefixPool,
  validateInClusterIPPoolCreate,
} from '../../src/index.js';
import { createObject, type ObjectRef, replaceStatus } from './client.js';

/** The generated in-cluster CRDs installed in a real kube-apiserver (global setup). */

let testNamespace: TestNamespace | undefined;
let namespace = '';
beforeAll(async () => {
  testNamespace = await createTestNamespace(testEnv().kubeConfig, 'api-types-incluster');
  namespace = testNamespace.name;
});
afterAll(async () => {
  await testNamespace?.delete();
});

async function referenceSample(file: string): Promise<ObjectRef & { spec: Record<string, unknown> }> {
  const dir = join(await referenceIpamModuleDir(), 'config', 'samples');
  return parse(await readFile(join(dir, file), 'utf8')) as ObjectRef & { spec: Record<string, unknown> };
}

describe("the reference's own samples (config/samples of v1.1.0)", () => {
  it.each([
    ['ipam_v1alpha2_inclusterippool.yaml', parseInClusterIPPool],
    ['ipam_v1alpha2_globalinclusterippool.yaml', parseGlobalInClusterIPPool],
  ] as const)(
    '%s: stored unchanged, parsed, admitted, and hands out what the reference would',
    async (file, parser) => {
      const sample = await referenceSample(file);
      const answer = await createObject(testEnv().kubeConfig, sample, namespace);
      expect(answer.accepted).toBe(true);
      if (!answer.accepted) return;
      expect(answer.object.spec).toEqual(sample.spec);
      const parsed = parser(answer.object);
      expect(parsed.success).toBe(true);
      if (!parsed.success || parsed.data.spec === undefined) return;
      expect(validateInClusterIPPoolCreate(parsed.data.spec)).toEqual([]);
      // 10.0.0.2-10.0.0.254 less 10.0.0.3-10.0.1.6 (exclusions may reach outside the subnet), the gateway 10.0.0.1.
      const space = inClusterAddressSpace(parsed.data.spec);
      if (!space.ok) throw new Error('expected the sample to map');
      expect(space.pool.allocatable.intervals).toEqual([{ first: 0x0a000002n, last: 0x0a000002n }]);
    },
  );
});

describe('defaults, status and bounds on the API server', () => {
  it('a prefix pool without allocationPrefixLength is stored with 64', async () => {
    const pool = {
      apiVersion: 'ipam.cluster.x-k8s.io/v1alpha2',
      kind: 'InClusterPrefixPool',
      metadata: { name: 'defaulted' },
      spec: { prefixes: ['fd00::/48'] },
    };
    const answer = await createObject(testEnv().kubeConfig, pool, namespace);
    expect(answer.accepted && answer.object.spec).toEqual({ prefixes: ['fd00::/48'], allocationPrefixLength: 64 });
    if (answer.accepted) expect(parseInClusterPrefixPool(answer.object).success).toBe(true);
  });

  it("status.ipAddresses is written through /status with the reference's wire names", async () => {
    const pool = {
      apiVersion: 'ipam.cluster.x-k8s.io/v1alpha2',
      kind: 'InClusterIPPool',
      metadata: { name: 'with-status' },
      spec: { addresses: ['10.1.0.0/29'], prefix: 29 },
    };
    const created = await createObject(testEnv().kubeConfig, pool, namespace, { persist: true });
    expect(created.accepted).toBe(true);
    if (!created.accepted) return;
    const status = { ipAddresses: { total: 6, free: 5, used: 1, outOfRange: 0 } };
    const written = await replaceStatus(
      testEnv().kubeConfig,
      { ...pool, metadata: created.object.metadata as ObjectRef['metadata'], status },
      namespace,
    );
    expect(written.accepted && written.object.status).toEqual(status);
  });

  /** Values around each bound of the CRD, and of the wrong types. */
  const specValue = fc.record(
    {
      addresses: fc.oneof(fc.constant(['10.0.0.1']), fc.constant([]), fc.constant('10.0.0.1'), fc.constant([1])),
      prefix: fc.oneof(fc.integer({ min: -2, max: 130 }), fc.constant(1.5), fc.constant('24')),
      gateway: fc.oneof(fc.constant('10.0.0.1'), fc.constant(''), fc.constant(7)),
      excludedAddresses: fc.oneof(fc.constant(['10.0.0.2']), fc.constant([]), fc.constant(null)),
      allocateReservedIPAddresses: fc.oneof(fc.boolean(), fc.constant('true')),
      addressReuseGracePeriodSeconds: fc.oneof(
        fc.integer({ min: -2, max: 2 }),
        fc.constantFrom(2147483647, 2147483648, 0.5),
      ),
    },
    { requiredKeys: [] },
  );

  it('zod accepts a spec exactly when the API server does (server-side dry run)', async () => {
    await fc.assert(
      fc.asyncProperty(specValue, fc.constantFrom('InClusterIPPool', 'GlobalInClusterIPPool'), async (spec, kind) => {
        const pool = { apiVersion: 'ipam.cluster.x-k8s.io/v1alpha2', kind, metadata: { name: 'fuzz' }, spec };
        const answer = await createObject(testEnv().kubeConfig, pool, namespace);
        const parser = kind === 'InClusterIPPool' ? parseInClusterIPPool : parseGlobalInClusterIPPool;
        // null is pruned to absent by the API server before validation; zod reads what the server would store.
        const stored = JSON.parse(JSON.stringify(pool, (_key, value: unknown) => (value === null ? undefined : value)));
        expect(parser({ ...stored, metadata: { name: 'fuzz', namespace } }).success, JSON.stringify(spec)).toBe(
          answer.accepted,
        );
      }),
      { numRuns: 120 },
    );
  });
});
