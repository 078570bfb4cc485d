import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildKustomization, parseManifests } from '../src/kustomize.js';

const temporary: string[] = [];
afterAll(() => {
  for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
});

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'tally-kustomize-'));
  temporary.push(dir);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

const ROLE = 'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: r\nrules: []\n';
const ACCOUNT = 'apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: sa\n';
const BINDING = `apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: b
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: x}
subjects:
  - {kind: ServiceAccount, name: sa, namespace: elsewhere}
  - {kind: User, name: someone}
`;

describe('buildKustomization', () => {
  it('sets the namespace on namespaced objects and ServiceAccount subjects only, labels everything, in install order', () => {
    const dir = tree({
      'default/kustomization.yaml':
        'namespace: ns\nlabels:\n  - pairs: {a: b}\n    includeSelectors: false\nresources: [../rbac, ns.yaml]\n',
      'default/ns.yaml': 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ns\n',
      'rbac/kustomization.yaml': 'resources: [binding.yaml, role.yaml, account.yaml]\n',
      'rbac/binding.yaml': BINDING,
      'rbac/role.yaml': ROLE,
      'rbac/account.yaml': ACCOUNT,
    });
    const built = buildKustomization(join(dir, 'default'));
    expect(built.map((m) => `${m.kind}/${m.metadata.namespace ?? '-'}`)).toEqual([
      'Namespace/-',
      'ServiceAccount/ns',
      'ClusterRole/-',
      'RoleBinding/ns',
    ]);
    expect(built.every((m) => m.metadata.labels?.a === 'b')).toBe(true);
    expect(built[3]?.subjects).toEqual([
      { kind: 'ServiceAccount', name: 'sa', namespace: 'ns' },
      { kind: 'User', name: 'someone' },
    ]);
  });

  it('refuses kustomization features it does not render instead of dropping them', () => {
    const dir = tree({ 'kustomization.yaml': 'resources: []\nimages:\n  - name: controller\n' });
    expect(() => buildKustomization(dir)).toThrow(/images not supported by @tally-ipam\/ship/);
  });

  it('refuses selector labels, missing resources and objects defined twice, naming them', () => {
    expect(() =>
      buildKustomization(tree({ 'kustomization.yaml': 'labels:\n  - pairs: {a: b}\n    includeSelectors: true\n' })),
    ).toThrow(/metadata labels only/);
    expect(() => buildKustomization(tree({ 'kustomization.yaml': 'resources: [gone.yaml]\n' }))).toThrow(
      /resource gone\.yaml does not exist/,
    );
    const twice = tree({ 'kustomization.yaml': 'resources: [a.yaml, b.yaml]\n', 'a.yaml': ROLE, 'b.yaml': ROLE });
    expect(() => buildKustomization(twice)).toThrow(/ClusterRole\/\/r is defined twice/);
  });
});

describe('parseManifests', () => {
  it('skips empty documents and names the document that is not a Kubernetes object', () => {
    expect(parseManifests(`---\n---\n${ROLE}`, 'x.yaml')).toHaveLength(1);
    expect(() => parseManifests(`${ROLE}---\nkind: Thing\n`, 'x.yaml')).toThrow(
      /x\.yaml, document 2: not a Kubernetes object/,
    );
  });
});
