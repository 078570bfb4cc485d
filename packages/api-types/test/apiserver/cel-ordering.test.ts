import { formatIP, type IPFamily } from '@tally-ipam/allocator';
import { createTestNamespace, type TestNamespace } from '@tally-ipam/testenv';
import { testEnv } from '@tally-ipam/testenv/vitest';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTallyIPPool } from '../../src/index.js';
import { ipPool } from '../fixtures/pools.js';
import { createObject } from './client.js';

/**
 * CEL has no IP ordering, so a range's "first <= last" is computed from CIDR containment bit by bit
 * (`ipLessOrEqual` in src/tally/v1alpha1/cel.ts). This checks it on the real API server against BigInt comparison
 * at every bit position: pairs share a random-length prefix and then differ, so each of the 32/128 positions where
 * two addresses can first differ is reached.
 */

let namespace: TestNamespace;
beforeAll(async () => {
  namespace = await createTestNamespace(testEnv().kubeConfig, 'api-types-ordering');
});
afterAll(async () => {
  await namespace?.delete();
});

function addressPair(family: IPFamily): fc.Arbitrary<[bigint, bigint]> {
  const bits = family === 4 ? 32 : 128;
  const max = (1n << BigInt(bits)) - 1n;
  return fc
    .tuple(fc.bigInt({ min: 0n, max }), fc.integer({ min: 0, max: bits }), fc.bigInt({ min: 0n, max }))
    .map(([a, sharedBits, noise]): [bigint, bigint] => {
      // b keeps a's first `sharedBits` bits and takes the rest from `noise`.
      const lowMask = sharedBits === bits ? 0n : (1n << BigInt(bits - sharedBits)) - 1n;
      const b = (a & ~lowMask & max) | (noise & lowMask);
      return [a, b];
    })
    .filter(([a, b]) => family === 4 || !(isMapped(a) || isMapped(b)));
}

/** ::ffff:0:0/96 is refused by the API server's parser whatever the order; keep it out of an ordering test. */
function isMapped(value: bigint): boolean {
  return value >> 32n === 0xffffn;
}

async function rangeAccepted(
  family: IPFamily,
  first: bigint,
  last: bigint,
): Promise<{ server: boolean; zod: boolean }> {
  const range = `${formatIP({ family, value: first })}-${formatIP({ family, value: last })}`;
  const manifest = ipPool({ addresses: [range], prefix: 0 });
  const answer = await createObject(testEnv().kubeConfig, manifest, namespace.name);
  if (!answer.accepted && answer.code !== 422) throw new Error(`HTTP ${answer.code}: ${answer.message}`);
  return { server: answer.accepted, zod: parseTallyIPPool(manifest).success };
}

describe('range order in CEL matches numeric order', () => {
  it.each([
    [4, 120],
    [6, 200],
  ] as const)('IPv%i', async (family, runs) => {
    await fc.assert(
      fc.asyncProperty(addressPair(family), async ([first, last]) => {
        const verdict = await rangeAccepted(family, first, last);
        expect(verdict).toEqual({ server: first <= last, zod: first <= last });
      }),
      { numRuns: runs },
    );
  });

  it.each([
    [4, '10.0.0.255-10.0.1.0', true],
    [4, '10.0.1.0-10.0.0.255', false],
    [4, '255.255.255.255-255.255.255.255', true],
    [4, '0.0.0.1-0.0.0.0', false],
    [6, '::-ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', true],
    [6, '8000::-7fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', false],
    [6, 'fd00::1:0-fd00::ffff', false],
    [6, 'FD00::FFFF-fd00::1:0', true],
    [6, 'fd00:0:0:0:0:0:0:2-fd00::1', false],
  ] as const)('IPv%i %s → accepted %s', async (_, range, expected) => {
    const manifest = ipPool({ addresses: [range], prefix: 0 });
    const answer = await createObject(testEnv().kubeConfig, manifest, namespace.name);
    expect(answer.accepted).toBe(expected);
    expect(parseTallyIPPool(manifest).success).toBe(expected);
  });
});
