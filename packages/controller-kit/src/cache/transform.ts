import type { KubeObject } from './object.js';

/** Rewrites an object before the cache stores it (client-go's `TransformFunc`); must not mutate its input. */
export type Transform<T extends KubeObject> = (object: T) => T;

/**
 * The default transform: drops `metadata.managedFields`, which controllers never read and which is often the
 * largest part of a small object (server-side apply records one entry per field manager).
 */
export function dropManagedFields<T extends KubeObject>(object: T): T {
  if (object.metadata.managedFields === undefined) return object;
  const { managedFields: _dropped, ...metadata } = object.metadata;
  return { ...object, metadata };
}

/** Keeps objects as the API server sent them. */
export function keepObject<T extends KubeObject>(object: T): T {
  return object;
}
