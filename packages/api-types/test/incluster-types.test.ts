import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { referenceIpamModuleDir } from '@tally-ipam/testenv';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  type CustomResourceDefinition,
  calculateCRDName,
  diffCRDs,
  IN_CLUSTER_DEFAULT_ALLOCATION_PREFIX_LENGTH,
  inClusterCRDDirectory,
  inClusterCRDsYaml,
  inClusterGeneratedCRDFiles,
  parseGlobalInClusterIPPool,
  parseGlobalInClusterPrefixPool,
  parseInClusterIPPool,
  parseInClusterPrefixPool,
} from '../src/index.js';

/**
 * The in-cluster kinds against the reference provider's own CRDs (`config/crd/bases` of
 * sigs.k8s.io/cluster-api-ipam-provider-in-cluster v1.1.0, read from the Go module cache, where npm test's prepare
 * stage has put it to build the provider).
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

interface ReferenceVersion {
  name: string;
  served: boolean;
  storage: boolean;
  deprecated?: boolean;
  schema: { openAPIV3Schema: Json };
  subresources?: Json;
  additionalPrinterColumns?: { name: string; type: string; jsonPath: string }[];
}

interface ReferenceCRD {
  metadata: { name: string; labels?: Record<string, string> };
  spec: {
    group: string;
    scope: string;
    names: Record<string, unknown>;
    versions: ReferenceVersion[];
  };
}

async function referenceCRD(plural: string): Promise<ReferenceCRD> {
  const dir = join(await referenceIpamModuleDir(), 'config', 'crd', 'bases');
  return parse(await readFile(join(dir, `ipam.cluster.x-k8s.io_${plural}.yaml`), 'utf8')) as ReferenceCRD;
}

/** The labels the reference's kustomize patches add to one CRD (`config/crd/patches/clusterctl-label_in_*`). */
async function referencePatchLabels(plural: string): Promise<Record<string, string>> {
  const dir = join(await referenceIpamModuleDir(), 'config', 'crd', 'patches');
  const patch = parse(await readFile(join(dir, `clusterctl-label_in_${plural}.yaml`), 'utf8')) as ReferenceCRD;
  return patch.metadata.labels ?? {};
}

/** Descriptions are Tally's own words (documentation, not behaviour), so they are left out of the comparison. */
function withoutDescriptions(node: Json): Json {
  if (Array.isArray(node)) return node.map(withoutDescriptions);
  if (node === null || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([key]) => key !== 'description')
      .map(([key, value]) => [key, withoutDescriptions(value)]),
  );
}

interface SchemaDifference {
  path: string;
  tally: Json | undefined;
  reference: Json | undefined;
}

function schemaDifferences(tally: Json | undefined, reference: Json | undefined, path = ''): SchemaDifference[] {
  const isObject = (value: Json | undefined): value is { [key: string]: Json } =>
    value !== null && typeof value === 'object' && !Array.isArray(value);
  if (isObject(tally) && isObject(reference)) {
    const keys = [...new Set([...Object.keys(tally), ...Object.keys(reference)])].sort();
    return keys.flatMap((key) => schemaDifferences(tally[key], reference[key], path === '' ? key : `${path}.${key}`));
  }
  return JSON.stringify(tally) === JSON.stringify(reference) ? [] : [{ path, tally, reference }];
}

/**
 * Every deliberate difference between a generated openAPIV3Schema and the reference's, with its reason:
 * - Go `int` fields have no `format` in the reference; Tally's generator pins every integer's width, and a Go int is
 *   64 bits on every platform the reference ships for, so `int64` states what the reference stores. The API server
 *   now refuses an integer beyond int64 at admission, where the reference's decoder would fail to read the object.
 * - `addressReuseGracePeriodSeconds` (Go `*int32`) also carries `maximum: 2147483647`, the bound `format: int32`
 *   already implies; zod needs it written to type the field as int32.
 */
function intFormat(path: string): SchemaDifference {
  return { path: `${path}.format`, tally: 'int64', reference: undefined };
}
const STATUS_COUNTS = ['free', 'outOfRange', 'total', 'used'].map((field) =>
  intFormat(`properties.status.properties.ipAddresses.properties.${field}`),
);
const IP_POOL_DIFFERENCES: SchemaDifference[] = [
  {
    path: 'properties.spec.properties.addressReuseGracePeriodSeconds.maximum',
    tally: 2147483647,
    reference: undefined,
  },
  intFormat('properties.spec.properties.prefix'),
  ...STATUS_COUNTS,
];
const PREFIX_POOL_DIFFERENCES: SchemaDifference[] = [
  intFormat('properties.spec.properties.allocationPrefixLength'),
  ...STATUS_COUNTS,
];

const KINDS = [
  { kind: 'InClusterIPPool', plural: 'inclusterippools', scope: 'Namespaced', differences: IP_POOL_DIFFERENCES },
  {
    kind: 'GlobalInClusterIPPool',
    plural: 'globalinclusterippools',
    scope: 'Cluster',
    differences: IP_POOL_DIFFERENCES,
  },
  {
    kind: 'InClusterPrefixPool',
    plural: 'inclusterprefixpools',
    scope: 'Namespaced',
    differences: PREFIX_POOL_DIFFERENCES,
  },
  {
    kind: 'GlobalInClusterPrefixPool',
    plural: 'globalinclusterprefixpools',
    scope: 'Cluster',
    differences: PREFIX_POOL_DIFFERENCES,
  },
] as const;

const generated = new Map<string, CustomResourceDefinition>(
  inClusterGeneratedCRDFiles().map((file) => [file.crd.spec.names.kind, file.crd]),
);

describe('committed in-cluster CRDs match the zod schemas (run `pnpm --filter @tally-ipam/api-types gen-crds`)', () => {
  it('config/in-cluster/crd holds exactly the generated files, byte for byte', async () => {
    expect(await diffCRDs(inClusterCRDDirectory(), inClusterGeneratedCRDFiles())).toEqual({ changed: [], stale: [] });
  });

  it('the YAML stream holds the four CRDs in order', () => {
    const names = inClusterCRDsYaml()
      .split(/^---\n/m)
      .filter((document) => document.trim() !== '')
      .map((document) => (parse(document) as { metadata: { name: string } }).metadata.name);
    expect(names).toEqual(KINDS.map((entry) => `${entry.plural}.ipam.cluster.x-k8s.io`));
  });
});

describe('the generated CRDs are the reference provider v1.1.0 CRDs (config/crd/bases, from the Go module cache)', () => {
  it.each(KINDS)('$kind: name, group, names, scope and categories', async ({ kind, plural, scope }) => {
    const reference = await referenceCRD(plural);
    const crd = generated.get(kind);
    expect(crd?.metadata.name).toBe(reference.metadata.name);
    expect(calculateCRDName('ipam.cluster.x-k8s.io', kind)).toBe(reference.metadata.name);
    expect(crd?.spec.group).toBe(reference.spec.group);
    expect(crd?.spec.scope).toBe(scope);
    expect(reference.spec.scope).toBe(scope);
    expect(crd?.spec.names).toEqual(reference.spec.names);
  });

  it.each(KINDS)(
    '$kind: the labels of the reference patch, plus clusterctl and provider labels',
    async ({ plural, kind }) => {
      const labels = generated.get(kind)?.metadata.labels ?? {};
      expect(labels).toMatchObject(await referencePatchLabels(plural));
      // What `clusterctl init --ipam in-cluster` adds to every object it installs.
      expect(labels).toMatchObject({
        'clusterctl.cluster.x-k8s.io': '',
        'cluster.x-k8s.io/provider': 'ipam-in-cluster',
      });
    },
  );

  it.each(KINDS)(
    '$kind v1alpha2: served storage version, status subresource, printer columns',
    async ({ kind, plural }) => {
      const reference = (await referenceCRD(plural)).spec.versions.find((version) => version.name === 'v1alpha2');
      const version = generated.get(kind)?.spec.versions.find((entry) => entry.name === 'v1alpha2');
      expect(reference).toBeDefined();
      expect(version).toMatchObject({ served: reference?.served, storage: reference?.storage });
      expect(version?.deprecated).toBe(reference?.deprecated);
      expect(version?.subresources).toEqual(reference?.subresources);
      const columns = (list: readonly { name: string; type: string; jsonPath: string }[] | undefined) =>
        (list ?? []).map(({ name, type, jsonPath }) => ({ name, type, jsonPath }));
      expect(columns(version?.additionalPrinterColumns)).toEqual(columns(reference?.additionalPrinterColumns));
    },
  );

  it.each(KINDS)(
    '$kind v1alpha2: the openAPIV3Schema is the reference one but for the listed deliberate differences',
    async ({ kind, plural, differences }) => {
      const reference = (await referenceCRD(plural)).spec.versions.find((version) => version.name === 'v1alpha2');
      const version = generated.get(kind)?.spec.versions.find((entry) => entry.name === 'v1alpha2');
      const tallySchema = withoutDescriptions(version?.schema.openAPIV3Schema as unknown as Json);
      const referenceSchema = withoutDescriptions(reference?.schema.openAPIV3Schema ?? null);
      expect(schemaDifferences(tallySchema, referenceSchema)).toEqual(
        [...differences].sort((a, b) => a.path.localeCompare(b.path)),
      );
    },
  );

  it('the reference also serves a deprecated v1alpha1 of the IP pools, which Tally leaves out (and no other version)', async () => {
    for (const { kind, plural } of KINDS) {
      const reference = await referenceCRD(plural);
      const others = reference.spec.versions.filter((version) => version.name !== 'v1alpha2');
      const expected = kind.endsWith('IPPool') ? [{ name: 'v1alpha1', deprecated: true, storage: false }] : [];
      expect(others.map(({ name, deprecated, storage }) => ({ name, deprecated, storage }))).toEqual(expected);
      expect(generated.get(kind)?.spec.versions.map((version) => version.name)).toEqual(['v1alpha2']);
    }
  });
});

describe('parsing in-cluster pools', () => {
  const ipPool = {
    apiVersion: 'ipam.cluster.x-k8s.io/v1alpha2',
    kind: 'InClusterIPPool',
    metadata: { name: 'p', namespace: 'n' },
    spec: { addresses: ['10.0.0.10-10.0.0.20'], prefix: 24, gateway: '10.0.0.1' },
  };

  it('reads what the reference writes, status counts included; spec and status may be absent', () => {
    const status = { ipAddresses: { total: 11, free: 10, used: 1, outOfRange: 0 } };
    expect(parseInClusterIPPool({ ...ipPool, status })).toEqual({ success: true, data: { ...ipPool, status } });
    const bare = { ...ipPool, kind: 'GlobalInClusterIPPool', metadata: { name: 'g' }, spec: undefined };
    expect(parseGlobalInClusterIPPool(bare).success).toBe(true);
  });

  it('has no length limits of its own: what the reference stored is read unchanged', () => {
    const addresses = Array.from({ length: 2_000 }, (_, index) => `10.${index >> 8}.${index & 255}.1`);
    const result = parseInClusterIPPool({ ...ipPool, spec: { addresses, prefix: 8, gateway: 'x'.repeat(500) } });
    expect(result.success).toBe(true);
  });

  it.each([
    [{ prefix: 129 }, 'spec.prefix'],
    [{ prefix: -1 }, 'spec.prefix'],
    [{ prefix: 24.5 }, 'spec.prefix'],
    [{ addressReuseGracePeriodSeconds: -1 }, 'spec.addressReuseGracePeriodSeconds'],
    [{ addressReuseGracePeriodSeconds: 2 ** 31 }, 'spec.addressReuseGracePeriodSeconds'],
    [{ addresses: 'a' }, 'spec.addresses'],
    [{ allocateReservedIPAddresses: 'yes' }, 'spec.allocateReservedIPAddresses'],
  ])('refuses %j at the CRD bound, naming %s', (patch, field) => {
    const result = parseInClusterIPPool({ ...ipPool, spec: { ...ipPool.spec, ...patch } });
    expect(result.success).toBe(false);
    if (result.success) return;
    expect(result.error.issues.map((issue) => issue.path)).toContain(field);
  });

  it(`prefix pools: allocationPrefixLength defaults to ${IN_CLUSTER_DEFAULT_ALLOCATION_PREFIX_LENGTH}, as in the CRD`, () => {
    const pool = {
      apiVersion: 'ipam.cluster.x-k8s.io/v1alpha2',
      kind: 'InClusterPrefixPool',
      metadata: { name: 'p', namespace: 'n' },
      spec: { prefixes: ['fd00::/48'] },
    };
    const result = parseInClusterPrefixPool(pool);
    expect(result.success && result.data.spec?.allocationPrefixLength).toBe(64);
    const global = parseGlobalInClusterPrefixPool({
      ...pool,
      kind: 'GlobalInClusterPrefixPool',
      metadata: { name: 'g' },
      spec: { prefixes: ['fd00::/48'], allocationPrefixLength: 0 },
    });
    expect(global.success).toBe(false);
  });
});
