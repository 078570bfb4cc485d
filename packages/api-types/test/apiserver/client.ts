import { ApiException, CustomObjectsApi, type KubeConfig } from '@kubernetes/client-node';
import { pluralResourceName } from '../../src/index.js';

/** What the API server answered: the stored (or dry-run) object, or the status code and message of a refusal. */
export type ServerAnswer =
  | { accepted: true; object: Record<string, unknown> }
  | { accepted: false; code: number; message: string };

const CLUSTER_SCOPED = new Set([
  'GlobalTallyIPPool',
  'GlobalTallyPrefixPool',
  'GlobalInClusterIPPool',
  'GlobalInClusterPrefixPool',
]);

/** An object to send: its identity plus whatever body (spec, status) the request carries. */
export interface ObjectRef {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  spec?: unknown;
  status?: unknown;
}

function target(object: ObjectRef, namespace: string) {
  const [group = '', version = ''] = object.apiVersion.split('/');
  return {
    group,
    version,
    plural: pluralResourceName(object.kind),
    clusterScoped: CLUSTER_SCOPED.has(object.kind),
    namespace,
    name: object.metadata.name,
  };
}

async function answer(call: () => Promise<unknown>): Promise<ServerAnswer> {
  try {
    return { accepted: true, object: (await call()) as Record<string, unknown> };
  } catch (error) {
    if (!(error instanceof ApiException)) throw error;
    const body: unknown = typeof error.body === 'string' ? JSON.parse(error.body) : error.body;
    const message = (body as { message?: unknown } | undefined)?.message;
    return { accepted: false, code: error.code, message: typeof message === 'string' ? message : String(error.body) };
  }
}

/** Creates the object (server-side dry run unless `persist`), returning the server's answer. */
export function createObject(
  kc: KubeConfig,
  object: ObjectRef,
  namespace: string,
  options: { persist?: boolean } = {},
): Promise<ServerAnswer> {
  const api = kc.makeApiClient(CustomObjectsApi);
  const t = target(object, namespace);
  const dryRun = options.persist ? undefined : 'All';
  return answer(() =>
    t.clusterScoped
      ? api.createClusterCustomObject({ group: t.group, version: t.version, plural: t.plural, body: object, dryRun })
      : api.createNamespacedCustomObject({
          group: t.group,
          version: t.version,
          plural: t.plural,
          namespace,
          body: object,
          dryRun,
        }),
  );
}

/** Replaces the object (PUT) on the main resource. */
export function replaceObject(kc: KubeConfig, object: ObjectRef, namespace: string): Promise<ServerAnswer> {
  const api = kc.makeApiClient(CustomObjectsApi);
  const t = target(object, namespace);
  return answer(() =>
    t.clusterScoped
      ? api.replaceClusterCustomObject({
          group: t.group,
          version: t.version,
          plural: t.plural,
          name: t.name,
          body: object,
        })
      : api.replaceNamespacedCustomObject({
          group: t.group,
          version: t.version,
          plural: t.plural,
          namespace,
          name: t.name,
          body: object,
        }),
  );
}

/** Replaces the status subresource. */
export function replaceStatus(kc: KubeConfig, object: ObjectRef, namespace: string): Promise<ServerAnswer> {
  const api = kc.makeApiClient(CustomObjectsApi);
  const t = target(object, namespace);
  return answer(() =>
    t.clusterScoped
      ? api.replaceClusterCustomObjectStatus({
          group: t.group,
          version: t.version,
          plural: t.plural,
          name: t.name,
          body: object,
        })
      : api.replaceNamespacedCustomObjectStatus({
          group: t.group,
          version: t.version,
          plural: t.plural,
          namespace,
          name: t.name,
          body: object,
        }),
  );
}

export function deleteObject(kc: KubeConfig, object: ObjectRef, namespace: string): Promise<ServerAnswer> {
  const api = kc.makeApiClient(CustomObjectsApi);
  const t = target(object, namespace);
  return answer(() =>
    t.clusterScoped
      ? api.deleteClusterCustomObject({ group: t.group, version: t.version, plural: t.plural, name: t.name })
      : api.deleteNamespacedCustomObject({
          group: t.group,
          version: t.version,
          plural: t.plural,
          namespace,
          name: t.name,
        }),
  );
}
