import type { KubeObject, OwnerReference } from '../cache/object.js';

export interface OwnerReferenceOptions {
  /** Marks the owner as the managing controller (at most one per object). */
  readonly controller?: boolean | undefined;
  /** The garbage collector's foreground deletion of the owner waits for this dependent. */
  readonly blockOwnerDeletion?: boolean | undefined;
}

/** The group of an apiVersion: `''` for the core group (`v1`). */
export function apiGroupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/** An owner reference to `owner`; the owner must have been read from the server (it needs a uid). */
export function ownerReferenceTo(owner: KubeObject, options: OwnerReferenceOptions = {}): OwnerReference {
  const { apiVersion, kind } = owner;
  const { name, uid } = owner.metadata;
  if (!apiVersion || !kind || !uid) {
    throw new Error(
      `cannot reference ${kind ?? 'object'} "${name}" as an owner: it needs apiVersion, kind and metadata.uid (read it from the API server first)`,
    );
  }
  return {
    apiVersion,
    kind,
    name,
    uid,
    ...(options.controller === undefined ? {} : { controller: options.controller }),
    ...(options.blockOwnerDeletion === undefined ? {} : { blockOwnerDeletion: options.blockOwnerDeletion }),
  };
}

/** Thrown when an object already has a different controller than the one being set. */
export class AlreadyOwnedError extends Error {
  override readonly name = 'AlreadyOwnedError';
  constructor(
    readonly object: KubeObject,
    readonly existing: OwnerReference,
  ) {
    super(
      `${object.kind ?? 'object'} ${object.metadata.namespace ?? ''}/${object.metadata.name} is already controlled by ${existing.kind} "${existing.name}" (uid ${existing.uid})`,
    );
  }
}

/**
 * Returns `object` with a non-controller owner reference to `owner` (replacing one to the same group, kind and name,
 * as controller-runtime's SetOwnerReference does). The object itself is not changed.
 */
export function setOwnerReference<T extends KubeObject>(
  object: T,
  owner: KubeObject,
  options: Pick<OwnerReferenceOptions, 'blockOwnerDeletion'> = {},
): T {
  return upsertOwnerReference(object, ownerReferenceTo(owner, { ...options, controller: false }));
}

/**
 * Returns `object` with `owner` as its controller (`controller: true`, `blockOwnerDeletion: true` by default).
 * Throws `AlreadyOwnedError` if another object is already its controller.
 */
export function setControllerReference<T extends KubeObject>(
  object: T,
  owner: KubeObject,
  options: Pick<OwnerReferenceOptions, 'blockOwnerDeletion'> = {},
): T {
  const reference = ownerReferenceTo(owner, {
    controller: true,
    blockOwnerDeletion: options.blockOwnerDeletion ?? true,
  });
  const existing = object.metadata.ownerReferences?.find((ref) => ref.controller === true);
  if (existing && !sameOwner(existing, reference)) throw new AlreadyOwnedError(object, existing);
  return upsertOwnerReference(object, reference);
}

/** Returns `object` without owner references to `owner`. */
export function removeOwnerReference<T extends KubeObject>(object: T, owner: KubeObject): T {
  const remaining = (object.metadata.ownerReferences ?? []).filter((ref) => ref.uid !== owner.metadata.uid);
  return { ...object, metadata: { ...object.metadata, ownerReferences: remaining } };
}

/** True when `object` has any owner reference to `owner` (matched by uid). */
export function isOwnedBy(object: KubeObject, owner: KubeObject): boolean {
  const uid = owner.metadata.uid;
  return uid !== undefined && (object.metadata.ownerReferences ?? []).some((ref) => ref.uid === uid);
}

/** True when `owner` is the controller of `object` (matched by uid). */
export function isControlledBy(object: KubeObject, owner: KubeObject): boolean {
  const uid = owner.metadata.uid;
  return (
    uid !== undefined &&
    (object.metadata.ownerReferences ?? []).some((ref) => ref.controller === true && ref.uid === uid)
  );
}

/**
 * The first owner reference of a given group and kind, whatever its version or controller flag — how CAPI finds an
 * owner Cluster (`util.GetOwnerCluster`), since the Cluster is not always the controller.
 */
export function findOwnerReference(
  object: KubeObject,
  owner: { readonly apiGroup: string; readonly kind: string },
): OwnerReference | undefined {
  return (object.metadata.ownerReferences ?? []).find(
    (ref) => ref.kind === owner.kind && apiGroupOf(ref.apiVersion) === owner.apiGroup,
  );
}

function sameOwner(a: OwnerReference, b: OwnerReference): boolean {
  return apiGroupOf(a.apiVersion) === apiGroupOf(b.apiVersion) && a.kind === b.kind && a.name === b.name;
}

function upsertOwnerReference<T extends KubeObject>(object: T, reference: OwnerReference): T {
  const references = [...(object.metadata.ownerReferences ?? [])];
  const index = references.findIndex((ref) => sameOwner(ref, reference));
  if (index >= 0) references[index] = reference;
  else references.push(reference);
  return { ...object, metadata: { ...object.metadata, ownerReferences: references } };
}
