import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { validationMessageProblems } from '../src/crd/validation-messages.js';
import {
  calculateCRDName,
  diffCRDs,
  metal3CRDDirectory,
  metal3CRDsYaml,
  metal3GeneratedCRDFiles,
  parseMetal3IPAddress,
  parseMetal3IPClaim,
  parseMetal3IPPool,
} from '../src/index.js';
import { MALFORMED_METAL3_OBJECTS, metal3Pool, proposalExample } from './fixtures/metal3.js';

const PARSERS = { IPPool: parseMetal3IPPool, IPClaim: parseMetal3IPClaim, IPAddress: parseMetal3IPAddress } as const;

describe('committed Metal3 CRDs match the zod schemas (run `pnpm --filter @tally-ipam/api-types gen-crds`)', () => {
  it('config/metal3/crd holds exactly the generated files, byte for byte', async () => {
    expect(await diffCRDs(metal3CRDDirectory(), metal3GeneratedCRDFiles())).toEqual({ changed: [], stale: [] });
  });

  it('the YAML stream holds the three CRDs, and every rule has a static message', async () => {
    const names = metal3CRDsYaml()
      .split(/^---\n/m)
      .filter((document) => document.trim() !== '')
      .map((document) => (parse(document) as { metadata: { name: string } }).metadata.name);
    expect(names).toEqual(['ippools.ipam.metal3.io', 'ipclaims.ipam.metal3.io', 'ipaddresses.ipam.metal3.io']);
    const committed = await Promise.all(
      metal3GeneratedCRDFiles().map(async (file) =>
        parse(await readFile(join(metal3CRDDirectory(), file.fileName), 'utf8')),
      ),
    );
    expect(committed.flatMap((crd) => validationMessageProblems(crd))).toEqual([]);
  });
});

describe("the CRDs carry Metal3's kubebuilder markers (ip-address-manager api v1.10.1)", () => {
  const byKind = new Map(metal3GeneratedCRDFiles().map((file) => [file.crd.spec.names.kind, file.crd]));

  it.each([
    ['IPPool', 'ippools', ['cluster-api'], 'ipp', 'ippool', true, ['Cluster', 'Age']],
    ['IPClaim', 'ipclaims', ['cluster-api'], 'ipc', 'ipclaim', true, ['Age']],
    ['IPAddress', 'ipaddresses', ['metal3'], 'ipa', 'ipaddress', false, ['Age']],
  ] as const)(
    '%s: plural %s, categories %j, short names, status subresource %s, columns',
    (kind, plural, categories, abbreviation, singular, status, columns) => {
      const crd = byKind.get(kind);
      expect(crd?.metadata.name).toBe(`${plural}.ipam.metal3.io`);
      expect(calculateCRDName('ipam.metal3.io', kind)).toBe(`${plural}.ipam.metal3.io`);
      expect(crd?.spec.scope).toBe('Namespaced');
      expect(crd?.spec.names).toMatchObject({ plural, singular, listKind: `${kind}List`, categories: [...categories] });
      expect(crd?.spec.names.shortNames).toEqual([
        abbreviation,
        singular,
        `m3${abbreviation}`,
        `m3${singular}`,
        `m3${plural}`,
        `metal3${abbreviation}`,
        `metal3${singular}`,
        `metal3${plural}`,
      ]);
      const version = crd?.spec.versions[0];
      expect(version?.name).toBe('v1alpha1');
      expect(version?.subresources !== undefined).toBe(status);
      expect(version?.additionalPrinterColumns?.map((column) => column.name)).toEqual([...columns]);
    },
  );

  it('IPPool: the Cluster column reads the cluster-name label; status allocations are `indexes` on the wire', () => {
    const crd = byKind.get('IPPool');
    expect(crd?.spec.versions[0]?.additionalPrinterColumns?.[0]?.jsonPath).toBe(
      '.metadata.labels.cluster\\.x-k8s\\.io/cluster-name',
    );
    const status = crd?.spec.versions[0]?.schema.openAPIV3Schema.properties?.status;
    expect(Object.keys(status?.properties ?? {})).toEqual(['lastUpdated', 'indexes']);
  });

  it('field names and required fields are those of the Go types', () => {
    const specOf = (kind: string) => byKind.get(kind)?.spec.versions[0]?.schema.openAPIV3Schema.properties?.spec;
    expect(Object.keys(specOf('IPPool')?.properties ?? {}).sort()).toEqual(
      ['clusterName', 'dnsServers', 'gateway', 'namePrefix', 'pools', 'preAllocations', 'prefix'].sort(),
    );
    expect(specOf('IPPool')?.required).toEqual(['namePrefix']);
    expect(Object.keys(specOf('IPPool')?.properties?.pools?.items?.properties ?? {}).sort()).toEqual(
      ['dnsServers', 'end', 'gateway', 'prefix', 'start', 'subnet'].sort(),
    );
    expect(Object.keys(specOf('IPClaim')?.properties ?? {})).toEqual(['pool']);
    expect(Object.keys(specOf('IPAddress')?.properties ?? {}).sort()).toEqual(
      ['address', 'claim', 'dnsServers', 'gateway', 'pool', 'prefix'].sort(),
    );
    expect(specOf('IPAddress')?.required?.slice().sort()).toEqual(['address', 'claim', 'pool']);
    const reference = specOf('IPClaim')?.properties?.pool;
    expect(Object.keys(reference?.properties ?? {}).sort()).toEqual(
      ['apiVersion', 'fieldPath', 'kind', 'name', 'namespace', 'resourceVersion', 'uid'].sort(),
    );
    expect(reference?.['x-kubernetes-map-type']).toBe('atomic');
  });
});

describe('zod refuses what the API server refuses, at the same field', () => {
  it.each(MALFORMED_METAL3_OBJECTS.map((entry) => [entry.name, entry] as const))('%s', (_, entry) => {
    const parser = PARSERS[entry.manifest.kind as keyof typeof PARSERS];
    const result = parser(entry.manifest);
    expect(result.success).toBe(false);
    if (result.success) return;
    expect(result.error.issues.map((issue) => issue.path)).toContain(entry.zodPath);
  });

  it('the messages name the value as the API server does', () => {
    const result = parseMetal3IPPool(
      metal3Pool('p', { namePrefix: 'p', pools: [{ start: '10.0.0.9', end: '10.0.0.1', subnet: '10.0.0.0/24' }] }),
    );
    expect(!result.success && result.error.message).toContain(
      'spec.pools[0].end: end 10.0.0.1 is before start 10.0.0.9',
    );
  });
});

describe('the proposal examples and zod', () => {
  it('the IPPool example is refused only for its owner reference without uid, as by the API server', () => {
    const result = parseMetal3IPPool(proposalExample('ippool'));
    expect(!result.success && result.error.issues.map((issue) => issue.path)).toEqual([
      'metadata.ownerReferences[0].uid',
    ]);
  });

  it('the IPAddress example does not: `Address` and `Name` are not the published API’s `address` and `name`', () => {
    const result = parseMetal3IPAddress(proposalExample('ipaddress'));
    expect(!result.success && result.error.issues.map((issue) => issue.path)).toEqual(
      expect.arrayContaining(['spec.claim.name', 'spec.pool.name', 'spec.address']),
    );
  });
});
