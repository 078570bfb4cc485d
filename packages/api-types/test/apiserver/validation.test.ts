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
