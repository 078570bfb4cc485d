import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_WEBHOOK_CERT_DIR } from '@tally-ipam/controller-kit';
import { POOL_WEBHOOK_CONFIGURATION_NAME, poolWebhookConfiguration } from '@tally-ipam/ipam-provider';
import {
  at,
  buildKustomization,
  CERT_MANAGER_API_VERSION,
  defaultManifests,
  findVariables,
  only,
  PROVIDER_LABEL,
  parseManifests,
  renderComponents,
  substituteVariables,
} from '@tally-ipam/ship';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { IPAM_PROVIDER } from '../scripts/render-components.js';

const {
  appDir: APP_DIR,
  configDir: CONFIG_DIR,
  imageRepository: IMAGE_REPOSITORY,
  metadataFile: METADATA_FILE,
} = IPAM_PROVIDER;
const PROVIDER_NAME = IPAM_PROVIDER.providerName;

const NAMESPACE = 'tally-system';
const version = IPAM_PROVIDER.version;
const components = renderComponents(IPAM_PROVIDER);
const rendered = parseManifests(substituteVariables(components), 'ipam-components.yaml');
const temporary: string[] = [];
afterAll(() => {
  for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
});

describe('clusterctl components (ipam-components.yaml)', () => {
  it('holds the namespace, the five Tally CRDs, RBAC, the Deployment, Services, cert-manager objects and the webhook', () => {
    expect(rendered.map((m) => `${m.kind}/${m.metadata.name}`)).toEqual([
      'Namespace/tally-system',
      'CustomResourceDefinition/tallyippools.ipam.cluster.x-k8s.io',
      'CustomResourceDefinition/globaltallyippools.ipam.cluster.x-k8s.io',
      'CustomResourceDefinition/tallyprefixpools.ipam.cluster.x-k8s.io',
      'CustomResourceDefinition/globaltallyprefixpools.ipam.cluster.x-k8s.io',
      'CustomResourceDefinition/tallyaddresslocks.ipam.cluster.x-k8s.io',
      'ServiceAccount/tally-ipam-controller-manager',
      'Role/tally-ipam-leader-election-role',
      'ClusterRole/tally-ipam-manager-role',
      'RoleBinding/tally-ipam-leader-election-rolebinding',
      'ClusterRoleBinding/tally-ipam-manager-rolebinding',
      'Service/tally-ipam-metrics-service',
      'Service/tally-ipam-webhook-service',
      'Deployment/tally-ipam-controller-manager',
      'Issuer/tally-ipam-selfsigned-issuer',
      'Certificate/tally-ipam-serving-cert',
      `ValidatingWebhookConfiguration/${POOL_WEBHOOK_CONFIGURATION_NAME}`,
    ]);
  });

  it('labels every object cluster.x-k8s.io/provider=ipam-tally and has exactly one Namespace', () => {
    const unlabelled = rendered.filter((m) => m.metadata.labels?.[PROVIDER_LABEL] !== PROVIDER_NAME);
    expect(unlabelled.map((m) => `${m.kind}/${m.metadata.name}`)).toEqual([]);
    expect(rendered.filter((m) => m.kind === 'Namespace')).toHaveLength(1);
  });

  it('puts every namespaced object, binding subject and webhook service in the one namespace', () => {
    const clusterScoped = new Set([
      'Namespace',
      'CustomResourceDefinition',
      'ClusterRole',
      'ClusterRoleBinding',
      'ValidatingWebhookConfiguration',
    ]);
    for (const manifest of rendered) {
      expect(manifest.metadata.namespace, `${manifest.kind}/${manifest.metadata.name}`).toBe(
        clusterScoped.has(manifest.kind) ? undefined : NAMESPACE,
      );
    }
    for (const binding of rendered.filter((m) => m.kind.endsWith('RoleBinding'))) {
      expect(binding.subjects).toEqual([
        { kind: 'ServiceAccount', name: 'tally-ipam-controller-manager', namespace: NAMESPACE },
      ]);
    }
  });

  it('gives every CRD the contract label naming a served version, and the CRDs are the generated ones', () => {
    const crds = rendered.filter((m) => m.kind === 'CustomResourceDefinition');
    const generated = readdirSync(join(APP_DIR, '../../packages/api-types/config/crd')).filter((f) =>
      f.endsWith('.yaml'),
    );
    expect(crds).toHaveLength(generated.length);
    for (const crd of crds) {
      const contractVersion = crd.metadata.labels?.['cluster.x-k8s.io/v1beta2'];
      const served = (at(crd, 'spec', 'versions') as { name: string; served: boolean }[])
        .filter((v) => v.served)
        .map((v) => v.name);
      expect(served, crd.metadata.name).toContain(contractVersion);
    }
  });

  it('uses only well-formed, provider-prefixed variables with defaults, the image defaulting to this version', () => {
    const variables = findVariables(components);
    expect(new Set(variables.map((v) => v.name))).toEqual(
      new Set(['TALLY_IPAM_IMAGE', 'TALLY_IPAM_LOG_LEVEL', 'TALLY_IPAM_CONCURRENCY']),
    );
    for (const variable of variables) expect(variable.defaultValue, variable.name).toBeTruthy();
    expect(variables.find((v) => v.name === 'TALLY_IPAM_IMAGE')?.defaultValue).toBe(`${IMAGE_REPOSITORY}:v${version}`);
    const overridden = parseManifests(
      substituteVariables(components, { TALLY_IPAM_IMAGE: 'registry.example/tally:v9', TALLY_IPAM_LOG_LEVEL: 'debug' }),
      'overridden',
    );
    const container = at(only(overridden, 'Deployment'), 'spec', 'template', 'spec', 'containers', 0);
    expect(at(container, 'image')).toBe('registry.example/tally:v9');
    expect(at(container, 'args')).toContain('--log-level=debug');
  });

  it('the generator script writes the components and metadata.yaml for a release', () => {
    const out = mkdtempSync(join(tmpdir(), 'tally-release-'));
    temporary.push(out);
    const stdout = execFileSync(
      process.execPath,
      ['--import', 'tsx', join(APP_DIR, 'scripts/render-components.ts'), '--out', out, '--version', '1.2.3'],
      { encoding: 'utf8' },
    );
    expect(stdout).toContain('17 objects, v1.2.3');
    const written = readFileSync(join(out, 'ipam-components.yaml'), 'utf8');
    expect(written).toContain(`\${TALLY_IPAM_IMAGE:=${IMAGE_REPOSITORY}:v1.2.3}`);
    expect(readFileSync(join(out, 'metadata.yaml'), 'utf8')).toBe(readFileSync(METADATA_FILE, 'utf8'));
  });
});

describe('metadata.yaml', () => {
  it('parses as clusterctl Metadata and maps the current release series to contract v1beta2', () => {
    const metadata = parse(readFileSync(METADATA_FILE, 'utf8')) as {
      apiVersion: string;
      kind: string;
      releaseSeries: { major: number; minor: number; contract: string }[];
    };
    expect(metadata.apiVersion).toBe('clusterctl.cluster.x-k8s.io/v1alpha3');
    expect(metadata.kind).toBe('Metadata');
    const [major, minor] = version.split('.').map(Number);
    const series = metadata.releaseSeries.filter((s) => s.major === major && s.minor === minor);
    expect(series).toEqual([{ major, minor, contract: 'v1beta2' }]);
    for (const entry of metadata.releaseSeries) {
      expect(Number.isInteger(entry.major) && Number.isInteger(entry.minor)).toBe(true);
    }
  });
});

describe('the Deployment', () => {
  const manifests = defaultManifests(IPAM_PROVIDER);
  const deployment = only(manifests, 'Deployment');
  const pod = at(deployment, 'spec', 'template', 'spec');
  const container = at(pod, 'containers', 0) as Record<string, unknown>;
  const args = container.args as string[];
  const port = (name: string): unknown =>
    (container.ports as { name: string; containerPort: number }[]).find((p) => p.name === name)?.containerPort;

  it('runs one container named manager with leader election, as the service account of the RBAC', () => {
    expect(at(pod, 'containers')).toHaveLength(1);
    expect(container.name).toBe('manager');
    expect(args).toContain('--leader-elect');
    expect(at(pod, 'serviceAccountName')).toBe(only(manifests, 'ServiceAccount').metadata.name);
  });

  it('probes /healthz and /readyz on the port --health-probe-bind-address opens', () => {
    expect(args).toContain(`--health-probe-bind-address=:${port('healthz')}`);
    expect(at(container, 'livenessProbe', 'httpGet')).toEqual({ path: '/healthz', port: 'healthz' });
    expect(at(container, 'readinessProbe', 'httpGet')).toEqual({ path: '/readyz', port: 'healthz' });
    expect(args).toContain(`--metrics-bind-address=:${port('metrics')}`);
    expect(args).toContain(`--webhook-port=${port('webhook-server')}`);
  });

  it('is non-root, read-only, without capabilities, with RuntimeDefault seccomp and bounded resources', () => {
    expect(at(pod, 'securityContext')).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 65532,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(container.securityContext).toMatchObject({
      allowPrivilegeEscalation: false,
      privileged: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ['ALL'] },
    });
    for (const bound of ['requests', 'limits']) {
      expect(at(container, 'resources', bound, 'cpu'), bound).toBeTruthy();
      expect(at(container, 'resources', bound, 'memory'), bound).toBeTruthy();
    }
  });

  it('mounts the cert-manager Secret where the webhook server reads its certificate', () => {
    const mount = (container.volumeMounts as { name: string; mountPath: string }[]).find(
      (m) => m.mountPath === DEFAULT_WEBHOOK_CERT_DIR,
    );
    const volume = (at(pod, 'volumes') as { name: string; secret?: { secretName: string } }[]).find(
      (v) => v.name === mount?.name,
    );
    const certificate = only(manifests, 'Certificate');
    expect(certificate.apiVersion).toBe(CERT_MANAGER_API_VERSION);
    expect(volume?.secret?.secretName).toBe(at(certificate, 'spec', 'secretName'));
  });
});

describe('webhook and certificate wiring', () => {
  const manifests = defaultManifests(IPAM_PROVIDER);
  const webhook = only(manifests, 'ValidatingWebhookConfiguration');
  const service = only(manifests, 'Service', 'tally-ipam-webhook-service');
  const certificate = only(manifests, 'Certificate');
  const issuer = only(manifests, 'Issuer');

  it('is the configuration @tally-ipam/ipam-provider builds for service mode (names, paths, rules, policies)', () => {
    const expected = poolWebhookConfiguration({
      labels: { [PROVIDER_LABEL]: PROVIDER_NAME },
      client: {
        service: { namespace: NAMESPACE, name: service.metadata.name },
        certificate: { namespace: NAMESPACE, name: certificate.metadata.name },
      },
    });
    expect(webhook).toEqual(JSON.parse(JSON.stringify(expected)));
  });

  it('has cert-manager inject the CA of the Certificate that covers the webhook Service', () => {
    expect(webhook.metadata.annotations?.['cert-manager.io/inject-ca-from']).toBe(
      `${certificate.metadata.namespace}/${certificate.metadata.name}`,
    );
    expect(at(certificate, 'spec', 'dnsNames')).toContain(`${service.metadata.name}.${NAMESPACE}.svc`);
    expect(at(certificate, 'spec', 'issuerRef')).toEqual({ kind: 'Issuer', name: issuer.metadata.name });
    expect(issuer.apiVersion).toBe(CERT_MANAGER_API_VERSION);
    expect(at(issuer, 'spec', 'selfSigned')).toEqual({});
  });

  it('routes the webhook Service to the manager pods on the webhook port', () => {
    const deployment = only(manifests, 'Deployment');
    expect(at(service, 'spec', 'selector')).toEqual(at(deployment, 'spec', 'template', 'metadata', 'labels'));
    expect(at(service, 'spec', 'ports', 0)).toMatchObject({ port: 443, targetPort: 'webhook-server' });
  });
});

it('every kustomization directory under config/ renders on its own', () => {
  for (const dir of ['crd', 'rbac', 'manager', 'webhook', 'certmanager', 'default']) {
    expect(buildKustomization(join(CONFIG_DIR, dir)).length, dir).toBeGreaterThan(0);
  }
});
