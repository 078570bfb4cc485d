/**
 * Identifies one Kubernetes resource type the kit reads or writes. Everything that builds a URL (the reflector, the
 * client, the Lease elector) derives it from this one descriptor, so a resource is described once.
 */
export interface ResourceKind {
  /** `group/version`, or `v1` for the core group. */
  readonly apiVersion: string;
  readonly kind: string;
  /** Lower-case plural as served by the API server, e.g. `ipaddressclaims`. */
  readonly plural: string;
  readonly namespaced: boolean;
}

/** Namespace and name of one object; `namespace` is absent for cluster-scoped objects. */
export interface ObjectKey {
  readonly namespace?: string | undefined;
  readonly name: string;
}

/** The cache and queue key of an object: `namespace/name`, or `name` when cluster-scoped (client-go's convention). */
export function objectKeyString(key: ObjectKey): string {
  return key.namespace ? `${key.namespace}/${key.name}` : key.name;
}

export function parseObjectKey(key: string): ObjectKey {
  const slash = key.indexOf('/');
  return slash < 0 ? { name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/** `/api/v1` or `/apis/<group>/<version>`. */
export function apiPrefix(resource: ResourceKind): string {
  return resource.apiVersion.includes('/') ? `/apis/${resource.apiVersion}` : `/api/${resource.apiVersion}`;
}

/**
 * The collection path of a resource: all namespaces when `namespace` is undefined (or the resource is cluster-scoped),
 * else the namespaced collection.
 */
export function collectionPath(resource: ResourceKind, namespace?: string): string {
  const prefix = apiPrefix(resource);
  if (resource.namespaced && namespace) {
    return `${prefix}/namespaces/${encodeURIComponent(namespace)}/${resource.plural}`;
  }
  return `${prefix}/${resource.plural}`;
}

/** The path of one object of a resource. */
export function objectPath(resource: ResourceKind, key: ObjectKey): string {
  if (resource.namespaced && !key.namespace) {
    throw new Error(`${resource.kind} is namespaced: object path for "${key.name}" needs a namespace`);
  }
  return `${collectionPath(resource, key.namespace)}/${encodeURIComponent(key.name)}`;
}
