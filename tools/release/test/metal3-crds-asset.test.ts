import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { metal3CRDDirectory } from '@tally-ipam/api-types';
import { Client, isInvalid } from '@tally-ipam/controller-kit';
import { METAL3_POOL_RESOURCE } from '@tally-ipam/metal3-ipam';
import { installCRDs } from '@tally-ipam/testenv';
import { createTestNamespace, testEnv } from '@tally-ipam/testenv/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { appsVersion, writeClusterctlRepository, writeStandaloneAssets } from '../src/artifacts.js';

const work = mkdtempSync(join(tmpdir(), 'tally-metal3-crds-'));
let assetPath = '';

interface Manifest {
  readonly kind?: string;
  readonly metadata?: { readonly name?: string };
  readonly spec?: { readonly group?: string };
}

function documents(text: string): Manifest[] {
  return parseAllDocuments(text)
    .map((document) => document.toJS() as Manifest | null)
    .filter((object): object is Manifest => object !== null);
}

beforeAll(() => {
  assetPath = writeStandaloneAssets(join(work, 'release')).find((path) => basename(path) === 'metal3-crds.yaml') ?? '';
});

afterAll(() => {
  rmSync(work, { recursive: true, force: true });
});

describe('release asset metal3-crds.yaml', () => {
  it('is exactly the committed ipam.metal3.io CRDs (generated from the zod schemas, drift-checked in api-types)', () => {
    expect(assetPath).not.toBe('');
    const committed = readdirSync(metal3CRDDirectory())
      .filter((file) => file.endsWith('.yaml'))
      .map((file) => parse(readFileSync(join(metal3CRDDirectory(), file), 'utf8')) as Manifest);
    const shipped = documents(readFileSync(assetPath, 'utf8'));
    const byName = (list: Manifest[]): Manifest[] =>
      [...list].sort((a, b) => (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''));
    expect(byName(shipped)).toEqual(byName(committed));
    expect(shipped.map((object) => `${object.kind} ${object.metadata?.name}`)).toEqual([
      'CustomResourceDefinition ippools.ipam.metal3.io',
      'CustomResourceDefinition ipclaims.ipam.metal3.io',
      'CustomResourceDefinition ipaddresses.ipam.metal3.io',
    ]);
  });

  it("is not part of Tally's IPAM components (Metal3's provider owns these CRDs where Metal3 runs)", () => {
    const repository = writeClusterctlRepository(join(work, 'clusterctl'), appsVersion());
    const components = documents(readFileSync(repository.componentsPaths['ipam-tally'], 'utf8'));
    const crdGroups = components
      .filter((object) => object.kind === 'CustomResourceDefinition')
      .map((object) => object.spec?.group);
    expect(crdGroups.length).toBeGreaterThan(0);
    expect(crdGroups).not.toContain('ipam.metal3.io');
  });

  it('applies server-side to a real API server and brings its admission rules', async () => {
    const env = testEnv();
    await installCRDs(env.kubeConfig, [assetPath]);
    const namespace = await createTestNamespace(env.kubeConfig, 'metal3-crds');
    const client = new Client(env.kubeConfig, { fieldManager: 'metal3-crds-asset-test' });
    try {
      const pool = (name: string, end: string) => ({
        apiVersion: 'ipam.metal3.io/v1alpha1',
        kind: 'IPPool',
        metadata: { name, namespace: namespace.name },
        spec: { namePrefix: name, pools: [{ start: '192.168.0.10', end }], prefix: 24 },
      });
      await client.create(METAL3_POOL_RESOURCE, pool('accepted', '192.168.0.15'));
      const refusal = await client.create(METAL3_POOL_RESOURCE, pool('refused', '192.168.0.5')).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(isInvalid(refusal)).toBe(true);
      expect(String(refusal)).toContain('end 192.168.0.5 is before start 192.168.0.10');
    } finally {
      client.close();
      await namespace.delete();
    }
  });
});
