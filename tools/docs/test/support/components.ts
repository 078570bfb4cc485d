import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { z } from 'zod';
import type { KubeObject } from './kube.js';

/** The IPAM provider's components as clusterctl writes them: every object, parsed where the guide reads a field. */

const Component = z.looseObject({
  apiVersion: z.string(),
  kind: z.string(),
  metadata: z.looseObject({ name: z.string(), namespace: z.string().optional() }),
});

export function readComponents(path: string): KubeObject[] {
  return parseAllDocuments(readFileSync(path, 'utf8'))
    .map((document) => document.toJS() as unknown)
    .filter((value) => value !== null && value !== undefined)
    .map((value) => Component.parse(value) as KubeObject);
}

export function component(components: readonly KubeObject[], kind: string, name?: string): KubeObject {
  const found = components.filter(
    (object) => object.kind === kind && (name === undefined || object.metadata.name === name),
  );
  if (found.length !== 1) throw new Error(`the components hold ${found.length} ${kind} ${name ?? ''}, expected one`);
  return found[0] as KubeObject;
}

const Container = z.looseObject({
  name: z.string(),
  image: z.string(),
  args: z.array(z.string()).default([]),
  resources: z.looseObject({
    requests: z.record(z.string(), z.string()),
    limits: z.record(z.string(), z.string()),
  }),
});
const Deployment = z.looseObject({
  spec: z.looseObject({
    template: z.looseObject({ spec: z.looseObject({ containers: z.array(Container) }) }),
  }),
});
export type ManagerContainer = z.infer<typeof Container>;

/** The `manager` container of the controller's Deployment. */
export function managerContainer(components: readonly KubeObject[]): ManagerContainer {
  const deployment = Deployment.parse(component(components, 'Deployment'));
  const container = deployment.spec.template.spec.containers.find((candidate) => candidate.name === 'manager');
  if (!container) throw new Error('the Deployment has no container named manager');
  return container;
}

const PolicyRule = z.looseObject({
  apiGroups: z.array(z.string()).optional(),
  resources: z.array(z.string()).optional(),
  nonResourceURLs: z.array(z.string()).optional(),
  verbs: z.array(z.string()),
});
export type PolicyRule = z.infer<typeof PolicyRule>;

/** The rules of a ClusterRole or Role of the components. */
export function roleRules(components: readonly KubeObject[], kind: 'ClusterRole' | 'Role', name: string): PolicyRule[] {
  return z.looseObject({ rules: z.array(PolicyRule) }).parse(component(components, kind, name)).rules;
}

/** Every name the components give an object, and the Secret names they mount or issue: what the guide may name. */
export function componentNames(components: readonly KubeObject[]): Set<string> {
  const names = new Set<string>();
  const SecretName = z.looseObject({ spec: z.looseObject({ secretName: z.string() }) });
  for (const object of components) {
    if (object.metadata.name) names.add(object.metadata.name);
    const secret = SecretName.safeParse(object);
    if (object.kind === 'Certificate' && secret.success) names.add(secret.data.spec.secretName);
  }
  return names;
}
