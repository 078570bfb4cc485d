import { describe, expect, it } from 'vitest';
import {
  type ParseResult,
  parseGlobalTallyIPPool,
  parseGlobalTallyPrefixPool,
  parseTallyIPPool,
  parseTallyPrefixPool,
} from '../src/index.js';
import { formatFieldPath } from '../src/parse.js';
import { DEFAULT_ALLOCATION_STRATEGY } from '../src/tally/v1alpha1/constants.js';
import { MALFORMED_POOLS, type PoolManifest, sampleManifests, withoutUndefined } from './fixtures/pools.js';

const PARSERS: Record<string, (input: unknown) => ParseResult<unknown>> = {
  TallyIPPool: parseTallyIPPool,
  GlobalTallyIPPool: parseGlobalTallyIPPool,
  TallyPrefixPool: parseTallyPrefixPool,
  GlobalTallyPrefixPool: parseGlobalTallyPrefixPool,
};

function parsePool(manifest: PoolManifest): ParseResult<unknown> {
  const parser = PARSERS[manifest.kind];
  if (!parser) throw new Error(`no parser for ${manifest.kind}`);
  return parser(manifest);
}

describe('zod accepts every sample manifest', () => {
  it.each(sampleManifests().map((sample) => [sample.file, sample.manifest] as const))('%s', (_, manifest) => {
    const result = parsePool(manifest);
    expect(result.success ? undefined : result.error.message).toBeUndefined();
  });

  it('fills the allocation strategy default like the API server does', () => {
    const sample = sampleManifests().find((s) => s.file === 'globaltallyippool.yaml');
    const result = parseGlobalTallyIPPool(sample?.manifest);
    expect(result.success && result.data.spec.allocationStrategy).toBe(DEFAULT_ALLOCATION_STRATEGY);
  });
});

describe('zod refuses every malformed pool at the field the API server names, showing the value', () => {
  it.each(MALFORMED_POOLS.map((pool) => [pool.name, pool] as const))('%s', (_, pool) => {
    const result = parsePool(withoutUndefined(pool.manifest));
    expect(result.success).toBe(false);
    if (result.success) return;
    const path = pool.zodPath ?? pool.field;
    const issue = result.error.issues.find((candidate) => candidate.path === path);
    expect(issue, `issues: ${result.error.message}`).toBeDefined();
    const expectedText = pool.zodValue ?? pool.value;
    if (issue && expectedText !== undefined) {
      expect(`${issue.message} ${JSON.stringify(issue.value)}`).toContain(expectedText);
    }
    expect(result.error.message).toContain(path);
  });
});

describe('parse errors', () => {
  it('name the kind, the object, every field path and the value found there', () => {
    const result = parseTallyIPPool({
      apiVersion: 'ipam.cluster.x-k8s.io/v1alpha1',
      kind: 'TallyIPPool',
      metadata: { name: 'edge', namespace: 'site-a' },
      spec: { addresses: ['10.0.0.1', '010.0.0.2'], prefix: 24, gateway: 'fd00::1' },
    });
    expect(result.success).toBe(false);
    if (result.success) return;
    expect(result.error.kind).toBe('TallyIPPool');
    expect(result.error.objectName).toBe('site-a/edge');
    expect(result.error.issues.map((issue) => [issue.path, issue.value])).toEqual([
      ['spec.addresses[1]', '010.0.0.2'],
      ['spec.gateway', 'fd00::1'],
    ]);
    expect(result.error.message).toMatch(/^invalid TallyIPPool site-a\/edge: spec\.addresses\[1\]: .*leading zeros/);
  });

  it('formats paths like the API server', () => {
    expect(formatFieldPath(['spec', 'reservations', 3, 'address'])).toBe('spec.reservations[3].address');
    expect(formatFieldPath([])).toBe('<root>');
  });
});
