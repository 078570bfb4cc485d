import { AuthorizationV1Api, type V1PolicyRule } from '@kubernetes/client-node';
import { Client } from '@tally-ipam/controller-kit';
import {
  at,
  CERT_MANAGER_API_VERSION,
  defaultManifests,
  discover,
  type Manifest,
  only,
  resourceKindOf,
} from '@tally-ipam/ship';
import { testEnv } from '@tally-ipam/testenv/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IPAM_PROVIDER } from '../scripts/render-components.js';

const FIELD_MANAGER = 'tally-manifests-test';
const SERVICE_ACCOUNT = 'system:serviceaccount:tally-system:tally-ipam-controller-manager';
const manifests = defaultManifests(IPAM_PROVIDER);
const kubeConfig = testEnv().kubeConfig;
const client = new Client(kubeConfig, { fieldManager: FIELD_MANAGER });

/** What the API server kept of each applied object, by `Kind/name`. */
const stored = new Map<string, Record<string, unknown>>();

async function apply(manifest: Manifest, dryRun: boolean): Promise<Record<string, unknown>> {
  const resource = await resourceKindOf(kubeConfig, manifest);
  try {
    return (await client.apply(resource, manifest, {
      force: true,
      fieldValidation: 'Strict',
      ...(dryRun ? { dryRun: 'All' as const } : {}),
    })) as unknown as Record<string, unknown>;
  } catch (error) {
    throw new Error(
      `apply ${manifest.kind}/${manifest.metadata.name}: ${error instanceof Error ? error.message : String(error)}`,
      {
        cause: error,
      },
    );
  }
}

beforeAll(async () => {
  for (const manifest of manifests) {
    if (manifest.apiVersion === CERT_MANAGER_API_VERSION) continue;
    // A real ValidatingWebhookConfiguration would send every pool write of the shared control plane to a Service
    // with no endpoints; dry-run gets the same validation and admission without persisting it.
    const dryRun = manifest.kind === 'ValidatingWebhookConfiguration';
    stored.set(`${manifest.kind}/${manifest.metadata.name}`, await apply(manifest, dryRun));
  }
});

afterAll(async () => {
  // The namespace stays (deleting it races the next file's apply); the cluster-scoped RBAC goes.
  for (const manifest of manifests.filter((m) => m.kind === 'ClusterRoleBinding' || m.kind === 'ClusterRole')) {
    await client.delete(await resourceKindOf(kubeConfig, manifest), { name: manifest.metadata.name }).catch(() => {});
  }
});

describe('config/default on a real API server (server-side apply, strict field validation)', () => {
  it('accepts every object except the cert-manager ones, whose API is not installed here', async () => {
    const applied = manifests.filter((m) => m.apiVersion !== CERT_MANAGER_API_VERSION);
    expect([...stored.keys()]).toEqual(applied.map((m) => `${m.kind}/${m.metadata.name}`));
    expect(manifests.filter((m) => m.apiVersion === CERT_MANAGER_API_VERSION).map((m) => m.kind)).toEqual([
      'Issuer',
      'Certificate',
    ]);
    await expect(discover(kubeConfig, CERT_MANAGER_API_VERSION)).rejects.toThrow();
  });

  it('keeps the Deployment as written: container manager, security context, probes, cert volume', () => {
    const deployment = stored.get('Deployment/tally-ipam-controller-manager');
    const written = only(manifests, 'Deployment');
    const path = ['spec', 'template', 'spec', 'containers', 0] as const;
    expect(at(deployment, ...path, 'name')).toBe('manager');
    expect(at(deployment, ...path, 'securityContext')).toEqual(at(written, ...path, 'securityContext'));
    expect(at(deployment, ...path, 'livenessProbe', 'httpGet', 'path')).toBe('/healthz');
    expect(at(deployment, ...path, 'readinessProbe', 'httpGet', 'path')).toBe('/readyz');
    expect(at(deployment, 'spec', 'template', 'spec', 'volumes', 0, 'secret', 'secretName')).toBe(
      'tally-ipam-webhook-service-cert',
    );
  });

  it('admits the ValidatingWebhookConfiguration with the cert-manager annotation and four service-routed webhooks', () => {
    const webhook = stored.get('ValidatingWebhookConfiguration/tally-ipam-validating-webhook-configuration');
    expect(at(webhook, 'metadata', 'annotations', 'cert-manager.io/inject-ca-from')).toBe(
      'tally-system/tally-ipam-serving-cert',
    );
    const webhooks = at(webhook, 'webhooks') as unknown[];
    expect(webhooks).toHaveLength(4);
    for (const entry of webhooks)
      expect(at(entry, 'clientConfig', 'service', 'name')).toBe('tally-ipam-webhook-service');
  });

  it('names only resources and verbs the API server serves in the RBAC rules', async () => {
    const role = only(manifests, 'ClusterRole');
    const leader = only(manifests, 'Role');
    const rules = [...(role.rules as V1PolicyRule[]), ...(leader.rules as V1PolicyRule[])];
    const versions: Record<string, string[]> = {
      'ipam.cluster.x-k8s.io': ['v1alpha1', 'v1beta2'],
      'cluster.x-k8s.io': ['v1beta2'],
      'events.k8s.io': ['v1'],
      'coordination.k8s.io': ['v1'],
    };
    for (const rule of rules) {
      const group = rule.apiGroups?.[0] ?? '';
      expect(rule.apiGroups).toHaveLength(1);
      const served = (
        await Promise.all((versions[group] ?? []).map((version) => discover(kubeConfig, `${group}/${version}`)))
      ).flat();
      for (const name of rule.resources ?? []) {
        const [base = '', subresource] = name.split('/');
        expect(
          served.some((r) => r.name === base),
          `${group} ${base} is served`,
        ).toBe(true);
        if (subresource === 'finalizers') {
          // Not a served subresource: only the OwnerReferencesPermissionEnforcement admission check asks for it.
          expect(rule.verbs, name).toEqual(['update']);
          continue;
        }
        const resource = served.find((r) => r.name === name);
        for (const verb of rule.verbs) expect(resource?.verbs, `${group} ${name} ${verb}`).toContain(verb);
      }
    }
  });

  it('binds the service account to exactly what the controller needs (SubjectAccessReview)', async () => {
    const authorization = kubeConfig.makeApiClient(AuthorizationV1Api);
    const allowed = async (attributes: {
      verb: string;
      group: string;
      resource: string;
      subresource?: string;
      namespace?: string;
    }): Promise<boolean> => {
      const review = await authorization.createSubjectAccessReview({
        body: { spec: { user: SERVICE_ACCOUNT, groups: ['system:serviceaccounts'], resourceAttributes: attributes } },
      });
      return review.status?.allowed ?? false;
    };
    const ipam = 'ipam.cluster.x-k8s.io';
    const expectations: [Parameters<typeof allowed>[0], boolean][] = [
      [{ verb: 'create', group: ipam, resource: 'tallyaddresslocks' }, true],
      [{ verb: 'create', group: ipam, resource: 'ipaddresses', namespace: 'any' }, true],
      [{ verb: 'patch', group: ipam, resource: 'ipaddressclaims', subresource: 'status', namespace: 'any' }, true],
      [{ verb: 'update', group: ipam, resource: 'tallyippools', subresource: 'finalizers', namespace: 'any' }, true],
      [{ verb: 'watch', group: 'cluster.x-k8s.io', resource: 'clusters' }, true],
      [{ verb: 'create', group: 'events.k8s.io', resource: 'events', namespace: 'any' }, true],
      [{ verb: 'update', group: 'coordination.k8s.io', resource: 'leases', namespace: 'tally-system' }, true],
      // Refused: leases elsewhere, writes to Clusters, deleting claims or pools, Secrets, core Events.
      [{ verb: 'update', group: 'coordination.k8s.io', resource: 'leases', namespace: 'default' }, false],
      [{ verb: 'patch', group: 'cluster.x-k8s.io', resource: 'clusters', namespace: 'any' }, false],
      [{ verb: 'delete', group: ipam, resource: 'ipaddressclaims', namespace: 'any' }, false],
      [{ verb: 'delete', group: ipam, resource: 'tallyippools', namespace: 'any' }, false],
      [{ verb: 'create', group: ipam, resource: 'tallyippools', namespace: 'any' }, false],
      [{ verb: 'get', group: '', resource: 'secrets', namespace: 'tally-system' }, false],
      [{ verb: 'create', group: '', resource: 'events', namespace: 'any' }, false],
    ];
    const results = await Promise.all(expectations.map(async ([attributes]) => allowed(attributes)));
    expect(results).toEqual(expectations.map(([, expected]) => expected));
  });
});
