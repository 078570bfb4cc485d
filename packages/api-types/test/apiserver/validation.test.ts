import { createTestNamespace, type TestNamespace } from '@tally-ipam/testenv';
import { testEnv } from '@tally-ipam/testenv/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MALFORMED_POOLS, sampleManifests, withoutUndefined } from '../fixtures/pools.js';
import { createObject } from './client.js';

let namespace: TestNamespace;

beforeAll(async () => {
  namespace = await createTestNamespace(testEnv().kubeConfig, 'api-types-validation');
});
afterAll(async () => {
  await namespace?.delete();
});

describe('the real API server accepts every sample manifest as written', () => {
  it.each(sampleManifests().map((sample) => [sample.file, sample.manifest] as const))('%s', async (_, manifest) => {
    const answer = await createObject(testEnv().kubeConfig, manifest, namespace.name);
    expect(answer).toMatchObject({ accepted: true });
  });
});

describe('the real API server refuses malformed pools, naming the field and the value', () => {
  it('has at least 40 cases', () => {
    expect(MALFORMED_POOLS.length).toBeGreaterThanOrEqual(40);
  });

  it.each(MALFORMED_POOLS.map((pool) => [pool.name, pool] as const))('%s', async (_, pool) => {
    const answer = await createObject(testEnv().kubeConfig, withoutUndefined(pool.manifest), namespace.name);
    expect(answer.accepted).toBe(false);
    if (answer.accepted) return;
    expect(answer.code).toBe(422);
    expect(answer.message).toContain(`${pool.field}:`);
    if (pool.value !== undefined) expect(answer.message).toContain(pool.value);
  });
});

describe('a CEL rule whose message expression cannot be shown', () => {
  it('falls back to the static message naming the field, never the CEL source', async () => {
    // The message expression echoes the entry; a line break in it makes the API server drop the expression's text.
    const answer = await createObject(
      testEnv().kubeConfig,
      {
        apiVersion: 'ipam.cluster.x-k8s.io/v1alpha1',
        kind: 'TallyIPPool',
        metadata: { name: 'line-break' },
        spec: { addresses: ['10.0.0.1\n'], prefix: 24 },
      },
      namespace.name,
    );
    expect(answer.accepted).toBe(false);
    if (answer.accepted) return;
    expect(answer.message).toContain(
      'spec.addresses[0]: Invalid value: "string": the entry is not an IP address, a CIDR, or a first-last range',
    );
    expect(answer.message).not.toContain('failed rule');
    expect(answer.message).not.toContain('self');
  });
});
