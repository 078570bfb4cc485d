import type { KubeObject } from '../cache/object.js';
import type { Client, RequestOptions } from './client.js';
import { isNotFound } from './errors.js';
import type { ObjectOf } from './object-schema.js';
import type { ResourceKind } from './resource.js';

export function hasFinalizer(object: KubeObject, finalizer: string): boolean {
  return object.metadata.finalizers?.includes(finalizer) ?? false;
}

/**
 * Adds a finalizer with a merge patch that carries the object's resourceVersion: merge patches replace the whole
 * list, so without the precondition a concurrent writer's finalizer could be dropped. A stale `object` fails with a
 * Conflict. Idempotent: when the finalizer is already there, nothing is sent and `object` is returned.
 */
export async function addFinalizer<R extends ResourceKind>(
  client: Client,
  resource: R,
  object: ObjectOf<R>,
  finalizer: string,
  options: RequestOptions = {},
): Promise<ObjectOf<R>> {
  if (hasFinalizer(object, finalizer)) return object;
  const finalizers = [...(object.metadata.finalizers ?? []), finalizer];
  return writeFinalizers(client, resource, object, finalizers, options);
}

/**
 * Removes a finalizer the same way (merge patch with a resourceVersion precondition). Idempotent: when the finalizer
 * is absent, nothing is sent. Removing the last finalizer of an object being deleted lets the deletion finish.
 *
 * An object that is already gone (404) has no finalizer left to remove, so that is success, returning `object`
 * without the finalizer: a reconcile working from a cache that has not yet seen the deletion its own previous
 * removal completed must not fail. (A re-created object of the same name has another resourceVersion, so the
 * precondition turns that case into a Conflict, never into a silent success.)
 */
export async function removeFinalizer<R extends ResourceKind>(
  client: Client,
  resource: R,
  object: ObjectOf<R>,
  finalizer: string,
  options: RequestOptions = {},
): Promise<ObjectOf<R>> {
  if (!hasFinalizer(object, finalizer)) return object;
  const finalizers = (object.metadata.finalizers ?? []).filter((existing) => existing !== finalizer);
  try {
    return await writeFinalizers(client, resource, object, finalizers, options);
  } catch (error) {
    if (!isNotFound(error)) throw error;
    return { ...object, metadata: { ...object.metadata, finalizers } };
  }
}

function writeFinalizers<R extends ResourceKind>(
  client: Client,
  resource: R,
  object: KubeObject,
  finalizers: readonly string[],
  options: RequestOptions,
): Promise<ObjectOf<R>> {
  const resourceVersion = object.metadata.resourceVersion;
  if (!resourceVersion) {
    throw new Error(
      `update finalizers of ${resource.kind} ${object.metadata.namespace ?? ''}/${object.metadata.name}: the object has no metadata.resourceVersion to use as a precondition`,
    );
  }
  // `null` deletes the key in a merge patch; an empty list would also do, but null keeps the object tidy.
  return client.mergePatch(
    resource,
    object.metadata,
    { metadata: { resourceVersion, finalizers: finalizers.length > 0 ? finalizers : null } },
    options,
  );
}
