/**
 * The shape of every object the cache holds: only the metadata the kit itself reads is spelled out; the rest of the
 * object is the caller's type. Objects come from the API server, so the metadata is validated with zod where it
 * enters (see `parse.ts`), never trusted blindly.
 */
export interface OwnerReference {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
  readonly controller?: boolean | undefined;
  readonly blockOwnerDeletion?: boolean | undefined;
}

export interface ObjectMeta {
  readonly name: string;
  readonly namespace?: string | undefined;
  readonly uid?: string | undefined;
  readonly resourceVersion?: string | undefined;
  readonly generation?: number | undefined;
  readonly labels?: Readonly<Record<string, string>> | undefined;
  readonly annotations?: Readonly<Record<string, string>> | undefined;
  readonly ownerReferences?: readonly OwnerReference[] | undefined;
  readonly finalizers?: readonly string[] | undefined;
  readonly deletionTimestamp?: string | undefined;
  readonly creationTimestamp?: string | undefined;
  readonly managedFields?: readonly unknown[] | undefined;
}

export interface KubeObject {
  readonly apiVersion?: string | undefined;
  readonly kind?: string | undefined;
  readonly metadata: ObjectMeta;
}

/** The store key of an object: `namespace/name`, or `name` for cluster-scoped objects (client-go's convention). */
export function keyOf(object: KubeObject): string {
  const { namespace, name } = object.metadata;
  return namespace ? `${namespace}/${name}` : name;
}

/** The owner reference marked `controller: true`, if any (there is at most one). */
export function controllerOwnerOf(object: KubeObject): OwnerReference | undefined {
  return object.metadata.ownerReferences?.find((ref) => ref.controller === true);
}

/**
 * True when `a` is a later version than `b`. Resource versions are opaque to clients in general, but kube-apiserver
 * on etcd hands out increasing integers, and kube-scheduler's assume cache relies on the same. A version that is not
 * an integer is neither newer nor older, so a caller choosing between two copies keeps the one it trusts by default
 * (an informer's).
 */
export function isNewer(a: KubeObject, b: KubeObject): boolean {
  const versionA = parseVersion(a.metadata.resourceVersion);
  const versionB = parseVersion(b.metadata.resourceVersion);
  return versionA !== undefined && versionB !== undefined && versionA > versionB;
}

function parseVersion(resourceVersion: string | undefined): bigint | undefined {
  if (resourceVersion === undefined || !/^\d+$/.test(resourceVersion)) return undefined;
  return BigInt(resourceVersion);
}
