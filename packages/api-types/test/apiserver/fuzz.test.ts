import { createTestNamespace, type TestNamespace } from '@tally-ipam/testenv';
import { testEnv } from '@tally-ipam/testenv/vitest';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTallyIPPool, parseTallyPrefixPool } from '../../src/index.js';
import { ipPool, type PoolManifest, prefixPool } from '../fixtures/pools.js';
import { createObject } from './client.js';

/**
 * Differential fuzzing: random pool specs, biased towards the edges of the address grammar, must be accepted by
 * zod exactly when the real API server (server-side dry run, so nothing is stored) accepts them. The API server is
 * the judge of the CRD side; run counts are modest because every case is an HTTP round trip.
 */

const IP_POOL_RUNS = 250;
const PREFIX_POOL_RUNS = 200;

let namespace: TestNamespace;
beforeAll(async () => {
  namespace = await createTestNamespace(testEnv().kubeConfig, 'api-types-fuzz');
});
afterAll(async () => {
  await namespace?.delete();
});

const octet = fc.oneof(
  { weight: 12, arbitrary: fc.integer({ min: 0, max: 255 }).map(String) },
  { weight: 1, arbitrary: fc.constantFrom('256', '01', '00', '010', '0x1', '', '1 ') },
);
const ipv4 = fc.oneof(
  { weight: 10, arbitrary: octet.map((fourth) => `10.0.0.${fourth}`) },
  { weight: 2, arbitrary: octet.map((fourth) => `10.0.1.${fourth}`) },
  { weight: 1, arbitrary: fc.tuple(octet, octet, octet, octet).map((parts) => parts.join('.')) },
  { weight: 1, arbitrary: fc.constantFrom('10.0.0', '10.0.0.1.1', '::ffff:10.0.0.1', '10.0.0.1%eth0') },
);

function compress(groups: string[]): string {
  let best = -1;
  let bestLength = 1;
  for (let start = 0; start < groups.length; start += 1) {
    let end = start;
    while (end < groups.length && Number.parseInt(groups[end] ?? '', 16) === 0) end += 1;
    if (end - start > bestLength) {
      best = start;
      bestLength = end - start;
    }
  }
  if (best < 0) return groups.join(':');
  return `${groups.slice(0, best).join(':')}::${groups.slice(best + bestLength).join(':')}`;
}

const lastGroup = fc.oneof(
  { weight: 12, arbitrary: fc.integer({ min: 0, max: 0xffff }).map((n) => n.toString(16)) },
  { weight: 1, arbitrary: fc.constantFrom('0', 'ffff', '10000', 'g1') },
);
const ipv6Style = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom('compressed', 'full', 'padded', 'upper', 'dotted') },
  { weight: 1, arbitrary: fc.constantFrom('zone', 'doubled', 'mapped') },
);
const ipv6 = fc.tuple(fc.constantFrom('0', '0', '1'), lastGroup, ipv6Style).map(([seventh, eighth, style]) => {
  const groups = ['fd00', '0', '0', '0', '0', '0', seventh, eighth];
  switch (style) {
    case 'full':
      return groups.join(':');
    case 'padded':
      return groups.map((group) => group.padStart(4, '0')).join(':');
    case 'upper':
      return compress(groups).toUpperCase();
    case 'zone':
      return `${compress(groups)}%eth0`;
    case 'doubled':
      return `fd00::1::${eighth}`;
    case 'mapped':
      return '::ffff:10.0.0.1';
    case 'dotted':
      return `fd00::${seventh}:10.0.0.${eighth.length}`;
    default:
      return compress(groups);
  }
});

type Family = 4 | 6;

/** Addresses of the pool's family most of the time, sometimes of the other one. */
function address(family: Family): fc.Arbitrary<string> {
  const [own, other] = family === 4 ? [ipv4, ipv6] : [ipv6, ipv4];
  return fc.oneof({ weight: 12, arbitrary: own }, { weight: 1, arbitrary: other });
}

function prefixLength(family: Family): fc.Arbitrary<string> {
  const typical = family === 4 ? fc.integer({ min: 24, max: 32 }) : fc.integer({ min: 100, max: 128 });
  return fc.oneof(
    { weight: 10, arbitrary: typical.map(String) },
    { weight: 2, arbitrary: fc.integer({ min: 0, max: 128 }).map(String) },
    { weight: 1, arbitrary: fc.constantFrom('129', '024', '', '-1', 'x') },
  );
}

/** A range whose ends are usually in order (a random pair is inverted half of the time). */
function orderedRange(family: Family): fc.Arbitrary<string> {
  return fc.tuple(fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 })).map(([a, b]) => {
    const [low, high] = a <= b ? [a, b] : [b, a];
    return family === 4 ? `10.0.0.${low}-10.0.0.${high}` : `fd00::${low.toString(16)}-fd00::${high.toString(16)}`;
  });
}

function entry(family: Family): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: address(family) },
    { weight: 4, arbitrary: orderedRange(family) },
    {
      weight: 2,
      arbitrary: fc.tuple(address(family), prefixLength(family)).map(([ip, length]) => `${ip}/${length}`),
    },
    { weight: 2, arbitrary: fc.tuple(address(family), address(family)).map(([first, last]) => `${first}-${last}`) },
    { weight: 1, arbitrary: fc.constantFrom('', 'bogus', '10.0.0.1-10.0.0.2-10.0.0.3') },
  );
}

const family = fc.constantFrom<Family>(4, 6);

const ipPoolSpec = family.chain((f) =>
  fc.record(
    {
      addresses: fc.array(entry(f), { minLength: 0, maxLength: 3 }),
      prefix: fc.oneof(
        { weight: 10, arbitrary: fc.constant(f === 4 ? 24 : 64) },
        { weight: 3, arbitrary: fc.integer({ min: -1, max: 130 }) },
      ),
      gateway: address(f),
      excludedAddresses: fc.array(entry(f), { maxLength: 2 }),
      allocateReservedIPAddresses: fc.boolean(),
      addressReuseGracePeriodSeconds: fc.oneof(
        { weight: 8, arbitrary: fc.constantFrom(0, 300, 3600) },
        { weight: 1, arbitrary: fc.constant(-1) },
      ),
      allocationStrategy: fc.oneof(
        { weight: 8, arbitrary: fc.constantFrom('LowestFree', 'Random', 'LeastRecentlyReleased') },
        { weight: 1, arbitrary: fc.constant('Fastest') },
      ),
      reservations: fc.array(
        fc.record({
          claimName: fc.oneof(
            { weight: 8, arbitrary: fc.constantFrom('cp-0', 'cp-1', 'worker-0', 'worker-1') },
            { weight: 1, arbitrary: fc.constant('Bad_Name') },
          ),
          address: address(f),
        }),
        { maxLength: 2 },
      ),
    },
    { requiredKeys: ['addresses', 'prefix'] },
  ),
);

function cidr(f: Family): fc.Arbitrary<string> {
  const aligned = f === 4 ? ['10.0.0.0/16', '10.1.0.0/24', '10.0.0.0/8'] : ['fd00:1::/48', 'fd00:2::/64', 'fd00::/40'];
  return fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...aligned) },
    { weight: 3, arbitrary: fc.tuple(address(f), prefixLength(f)).map(([ip, length]) => `${ip}/${length}`) },
    { weight: 1, arbitrary: fc.constantFrom('fd00:1::1/48', '10.0.0.1/8', '010.0.0.0/8') },
  );
}

const prefixPoolSpec = family.chain((f) =>
  fc.record(
    {
      prefixes: fc.array(cidr(f), { minLength: 0, maxLength: 3 }),
      allocationPrefixLength: fc.oneof(
        { weight: 8, arbitrary: fc.constantFrom(...(f === 4 ? [24, 28, 30] : [56, 64, 72])) },
        { weight: 2, arbitrary: fc.integer({ min: 0, max: 130 }) },
      ),
      gateway: address(f),
      excludedPrefixes: fc.array(entry(f), { maxLength: 2 }),
    },
    { requiredKeys: ['prefixes'] },
  ),
);

interface Verdict {
  zod: string | undefined;
  server: string | undefined;
}

async function judge(manifest: PoolManifest, zodError: string | undefined): Promise<Verdict> {
  const answer = await createObject(testEnv().kubeConfig, manifest, namespace.name);
  if (!answer.accepted && answer.code !== 422) throw new Error(`unexpected HTTP ${answer.code}: ${answer.message}`);
  return { zod: zodError, server: answer.accepted ? undefined : answer.message };
}

function agree(verdict: Verdict): boolean {
  return (verdict.zod === undefined) === (verdict.server === undefined);
}

describe('zod and the generated CRD agree (fast-check, server-side dry run)', () => {
  it('on IP pools', async () => {
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(ipPoolSpec, async (spec) => {
        const manifest = ipPool(spec);
        const zod = parseTallyIPPool(manifest);
        const verdict = await judge(manifest, zod.success ? undefined : zod.error.message);
        if (verdict.server === undefined) accepted += 1;
        expect(agree(verdict), JSON.stringify({ spec, ...verdict }, null, 2)).toBe(true);
      }),
      { numRuns: IP_POOL_RUNS },
    );
    // The generator must reach both sides of the boundary, or the property proves little (about 12% of the
    // generated IP pools are valid: 5 is more than four standard deviations below the expected count).
    expect(accepted).toBeGreaterThanOrEqual(5);
    expect(IP_POOL_RUNS - accepted).toBeGreaterThanOrEqual(5);
  });

  it('on prefix pools', async () => {
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(prefixPoolSpec, async (spec) => {
        const manifest = prefixPool(spec);
        const zod = parseTallyPrefixPool(manifest);
        const verdict = await judge(manifest, zod.success ? undefined : zod.error.message);
        if (verdict.server === undefined) accepted += 1;
        expect(agree(verdict), JSON.stringify({ spec, ...verdict }, null, 2)).toBe(true);
      }),
      { numRuns: PREFIX_POOL_RUNS },
    );
    expect(accepted).toBeGreaterThanOrEqual(5);
    expect(PREFIX_POOL_RUNS - accepted).toBeGreaterThanOrEqual(5);
  });
});
