import { createTestNamespace, type TestNamespace } from '@tally-ipam/testenv';
import { testEnv } from '@tally-ipam/testenv/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseTallyIPPool } from '../../src/index.js';
import { ipPool } from '../fixtures/pools.js';
import { createObject } from './client.js';

/**
 * Corners of the address grammar where two parsers commonly differ. The API server (Go netip behind CEL `isIP` /
 * `isCIDR`) is the judge; zod (the allocator's parser) must reach the same verdict on each, and the expected
 * verdict is written down so a change on either side is noticed.
 */

let namespace: TestNamespace;
beforeAll(async () => {
  namespace = await createTestNamespace(testEnv().kubeConfig, 'api-types-notation');
});
afterAll(async () => {
  await namespace?.delete();
});

const CASES: readonly [entry: string, valid: boolean][] = [
  ['1:2:3:4:5:6:7::', true],
  ['::1:2:3:4:5:6:7', true],
  ['1:2:3:4:5:6:7:8::', false],
  ['::', true],
  ['0:0:0:0:0:0:0:0', true],
  ['0000:0000:0000:0000:0000:0000:0000:0000', true],
  ['00000::', false],
  ['::1.2.3.4', true],
  ['64:ff9b::192.0.2.33', true],
  ['1:2:3:4:5:6:1.2.3.4', true],
  ['1:2:3:4:5:6:7:1.2.3.4', false],
  ['::1.2.3.04', false],
  ['::ffff:1.2.3.4', false],
  ['::ffff:102:304', false],
  ['::fffe:1.2.3.4', true],
  ['FE80::ABCD', true],
  ['fe80:0000::1', true],
  ['fe80::1%25eth0', false],
  ['[::1]', false],
  [':1::2', false],
  ['1::2:', false],
  [':::', false],
  ['1.2.3.4.', false],
  ['.1.2.3.4', false],
  ['1..3.4', false],
  ['1.2.3.-4', false],
  ['+1.2.3.4', false],
  ['1.2.3.4/32', true],
  ['1.2.3.4/0', true],
  ['0.0.0.0/0', true],
  ['1.2.3.4/+8', false],
  ['1.2.3.4/8/8', false],
  ['::/0', true],
  ['::1/128', true],
  ['::1/0128', false],
  ['::ffff:0:0/96', false],
  ['2001:db8::/32', true],
  ['1.2.3.4-1.2.3.4', true],
  ['::-::', true],
  ['::1.2.3.4-::1.2.3.5', true],
  ['fd00::1-FD00::2', true],
  ['fd00::2-FD00::1', false],
  ['1.2.3.4/24-1.2.3.5', false],
  ['1.2.3.4--1.2.3.5', false],
  ['-1.2.3.4', false],
];

describe('address notation corners: zod and the API server agree', () => {
  it.each(CASES)('%s → valid %s', async (entry, valid) => {
    const manifest = ipPool({ addresses: [entry], prefix: 0 });
    const answer = await createObject(testEnv().kubeConfig, manifest, namespace.name);
    if (!answer.accepted) expect(answer.code).toBe(422);
    const zod = parseTallyIPPool(manifest);
    expect({ server: answer.accepted, zod: zod.success }).toEqual({ server: valid, zod: valid });
  });
});
