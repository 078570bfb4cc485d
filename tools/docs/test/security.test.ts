import { readFileSync } from 'node:fs';
import { describe, expect, inject, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import { component, type PolicyRule, readComponents, roleRules } from './support/components.js';
import { guidePage, NETWORK_POLICY } from './support/guide.js';
import type { KubeObject } from './support/kube.js';
import { codeOf, tableWithHeader } from './support/markdown.js';

/**
 * The security model page, and the install page's certificate variants, against the components clusterctl renders:
 * the RBAC table is exactly the roles' rules, the webhook table exactly the webhook configuration, the ports the
 * Services and the NetworkPolicy name are the manager container's, the Pod's security settings the Deployment's.
 * A rule, port or setting changed in config/ without the page fails here.
 */

function components(): KubeObject[] {
  return readComponents(inject('tallyGuide').componentsPath);
}

/** `role|group|resource|verb`, one per permission, so a table may group rules differently from the YAML. */
function grants(role: string, rules: readonly PolicyRule[]): string[] {
  return rules.flatMap((rule) => {
    const targets = rule.nonResourceURLs
      ? rule.nonResourceURLs.map((url) => `|${url}`)
      : (rule.apiGroups ?? []).flatMap((group) => (rule.resources ?? []).map((resource) => `${group}|${resource}`));
    return targets.flatMap((target) => rule.verbs.map((verb) => `${role}|${target}|${verb}`));
  });
}

const Port = z.looseObject({ name: z.string(), containerPort: z.number() });
const Manager = z.looseObject({
  spec: z.looseObject({
    template: z.looseObject({
      spec: z.looseObject({
        securityContext: z.record(z.string(), z.unknown()).default({}),
        containers: z.array(
          z.looseObject({
            name: z.string(),
            ports: z.array(Port),
            securityContext: z.record(z.string(), z.unknown()).default({}),
          }),
        ),
      }),
    }),
  }),
});
type Manager = z.infer<typeof Manager>;

function manager(objects: readonly KubeObject[]): {
  pod: Manager['spec']['template']['spec'];
  container: Manager['spec']['template']['spec']['containers'][number];
} {
  const pod = Manager.parse(component(objects, 'Deployment')).spec.template.spec;
  const container = pod.containers.find((candidate) => candidate.name === 'manager');
  if (!container) throw new Error('the Deployment has no container named manager');
  return { pod, container };
}

/** A Service's or NetworkPolicy's port (a number or a container port's name) as the container's port number. */
function containerPort(ports: readonly z.infer<typeof Port>[], port: string | number): number {
  if (typeof port === 'number') return port;
  const found = ports.find((candidate) => candidate.name === port);
  if (!found) throw new Error(`the manager container has no port named ${port}`);
  return found.containerPort;
}

const Service = z.looseObject({
  spec: z.looseObject({
    ports: z.array(z.looseObject({ port: z.number(), targetPort: z.union([z.string(), z.number()]) })),
  }),
});

/** `a.b: value` for each leaf of a securityContext; lists joined with `, `. */
function flatten(prefix: string, value: unknown, into: Map<string, string>): void {
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    for (const [key, child] of Object.entries(value)) flatten(prefix ? `${prefix}.${key}` : key, child, into);
    return;
  }
  const text = Array.isArray(value) ? value.map(String).join(', ') : String(value);
  const known = into.get(prefix);
  if (known !== undefined && known !== text) throw new Error(`${prefix}: the Pod says ${known}, the container ${text}`);
  into.set(prefix, text);
}

describe('the security model page, against the components', () => {
  const page = guidePage('security.md');

  it('its RBAC table is exactly the rules of every Role and ClusterRole the components ship', () => {
    const objects = components();
    const roles = objects.filter((object) => object.kind === 'ClusterRole' || object.kind === 'Role');
    const shipped = roles.flatMap((role) =>
      grants(
        role.metadata.name ?? '',
        roleRules(objects, role.kind as 'ClusterRole' | 'Role', role.metadata.name ?? ''),
      ),
    );
    const table = tableWithHeader(page, 'role', 'API group', 'resources', 'verbs');
    const documented = table.rows.flatMap((row) => {
      const [role = '', group = '', resources = '', verbs = ''] = row.map((cell) => cell);
      const name = codeOf(role)[0] ?? role;
      // The core group is written `""`, as in a Role's apiGroups.
      const groups = codeOf(group).map((g) => (g === '""' ? '' : g));
      const targets = groups.length === 0 ? codeOf(resources).map((url) => `|${url}`) : [];
      for (const g of groups) for (const resource of codeOf(resources)) targets.push(`${g}|${resource}`);
      return targets.flatMap((target) => codeOf(verbs).map((verb) => `${name}|${target}|${verb}`));
    });
    expect(new Set(documented).size, 'a permission is listed twice').toBe(documented.length);
    expect([...documented].sort()).toEqual([...new Set(shipped)].sort());
  });

  it("its webhook table is exactly the webhook configuration's webhooks, and it names the Service's ports", () => {
    const objects = components();
    const Webhooks = z.looseObject({
      webhooks: z.array(
        z.looseObject({
          name: z.string(),
          failurePolicy: z.string(),
          rules: z.array(z.looseObject({ resources: z.array(z.string()), operations: z.array(z.string()) })),
        }),
      ),
    });
    const configuration = Webhooks.parse(
      component(objects, 'ValidatingWebhookConfiguration', 'tally-ipam-validating-webhook-configuration'),
    );
    const shipped = configuration.webhooks.map((webhook) =>
      [
        webhook.name,
        webhook.rules.flatMap((rule) => rule.resources).join(','),
        webhook.rules.flatMap((rule) => rule.operations).join(','),
        webhook.failurePolicy,
      ].join('|'),
    );
    const table = tableWithHeader(page, 'webhook', 'resources', 'operations', 'failure policy');
    const documented = table.rows.map((row) => row.map((cell) => codeOf(cell).join(',')).join('|'));
    expect(documented.sort()).toEqual(shipped.sort());

    const { container } = manager(objects);
    for (const name of ['tally-ipam-webhook-service', 'tally-ipam-metrics-service']) {
      const ports = Service.parse(component(objects, 'Service', name)).spec.ports;
      for (const port of ports) {
        const stated = `\`${name}\` (${port.port} → ${containerPort(container.ports, port.targetPort)})`;
        expect(page.text.replace(/\s+/g, ' '), stated).toContain(stated);
      }
    }
  });

  it('its NetworkPolicy is the shipped one, verbatim, admitting the webhook and metrics ports, which it names', () => {
    const shipped = readFileSync(NETWORK_POLICY, 'utf8');
    const blocks = page.blocks.filter((block) => block.lang === 'yaml' && block.text === shipped);
    expect(blocks.length, `no yaml block of ${page.path} is ${NETWORK_POLICY}`).toBe(1);

    const { container } = manager(components());
    const Policy = z.looseObject({
      spec: z.looseObject({
        ingress: z.array(z.looseObject({ ports: z.array(z.looseObject({ port: z.union([z.string(), z.number()]) })) })),
      }),
    });
    const admitted = Policy.parse(parse(shipped))
      .spec.ingress.flatMap((rule) => rule.ports)
      .map((port) => containerPort(container.ports, port.port));
    const webhookArg = container.ports.find((port) => port.name === 'webhook-server')?.containerPort;
    const metricsArg = container.ports.find((port) => port.name === 'metrics')?.containerPort;
    expect(admitted.sort()).toEqual([webhookArg, metricsArg].sort());
    // Every port of the container is named on the page with its number.
    for (const port of container.ports) {
      expect(page.text, port.name).toContain(`\`${port.name}\` (${port.containerPort}`);
    }
    // The install page states the same two ports.
    const install = guidePage('install.md').text.replace(/\s+/g, ' ');
    expect(install).toContain(`webhook port (${webhookArg})`);
    expect(install).toContain(`metrics port (${metricsArg})`);
  });

  it("its Pod settings are the Deployment's securityContext, Pod's and container's together", () => {
    const { pod, container } = manager(components());
    const shipped = new Map<string, string>();
    flatten('', pod.securityContext, shipped);
    flatten('', container.securityContext, shipped);
    const table = tableWithHeader(page, 'setting', 'value');
    const documented = new Map(table.rows.map((row) => [codeOf(row[0] ?? '')[0] ?? '', codeOf(row[1] ?? '')[0] ?? '']));
    expect(Object.fromEntries(documented)).toEqual(Object.fromEntries(shipped));
  });
});

describe("the install page's certificate variants, against the components", () => {
  const page = guidePage('install.md');
  const text = (): string => page.text.replace(/\s+/g, ' ');

  it('names the Issuer, the Certificate, its Secret and DNS name, and the CA injection annotation the components carry', () => {
    const objects = components();
    const Certificate = z.looseObject({
      spec: z.looseObject({
        secretName: z.string(),
        dnsNames: z.array(z.string()),
        issuerRef: z.looseObject({ name: z.string() }),
      }),
    });
    const certificate = component(objects, 'Certificate');
    const spec = Certificate.parse(certificate).spec;
    const issuer = component(objects, 'Issuer');
    for (const name of [
      certificate.metadata.name ?? '',
      issuer.metadata.name ?? '',
      spec.secretName,
      spec.issuerRef.name,
    ]) {
      expect(text(), name).toContain(`\`${name}\``);
    }
    expect(spec.dnsNames).toContain('tally-ipam-webhook-service.tally-system.svc');
    expect(text()).toContain('`tally-ipam-webhook-service.tally-system.svc`');

    const configuration = component(objects, 'ValidatingWebhookConfiguration');
    const annotations = z
      .record(z.string(), z.string())
      .parse((configuration.metadata as { annotations?: unknown }).annotations ?? {});
    const [key, value] = Object.entries(annotations).find(([name]) => name.startsWith('cert-manager.io/')) ?? [];
    expect(key, 'the webhook configuration has no cert-manager annotation').toBeDefined();
    expect(value).toBe(`${certificate.metadata.namespace}/${certificate.metadata.name}`);
    expect(text()).toContain(`\`${key}\``);
    expect(text()).toContain(`\`${configuration.metadata.name}\``);

    // The Secret the page tells a reader without cert-manager to create is the one the Deployment mounts.
    const Volumes = z.looseObject({
      spec: z.looseObject({
        template: z.looseObject({
          spec: z.looseObject({
            volumes: z.array(z.looseObject({ secret: z.looseObject({ secretName: z.string() }).optional() })),
          }),
        }),
      }),
    });
    const mounted = Volumes.parse(component(objects, 'Deployment')).spec.template.spec.volumes.flatMap((volume) =>
      volume.secret ? [volume.secret.secretName] : [],
    );
    expect(mounted).toEqual([spec.secretName]);
  });
});
