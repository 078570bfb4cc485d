import type { ResourceEventHandler } from '../cache/informer.js';
import { controllerOwnerOf, type KubeObject } from '../cache/object.js';
import type { ObjectKey, ResourceKind } from '../client/resource.js';
import { type AnyEvent, type Predicate, passesAll } from './predicate.js';

/** Maps an object of a watched type to the requests of the controller's primary type it affects. */
export type MapFunc<T extends KubeObject> = (object: T) => readonly ObjectKey[];

/** The request for the object itself (the `for` watch). */
export function requestForObject(object: KubeObject): readonly ObjectKey[] {
  return [{ namespace: object.metadata.namespace, name: object.metadata.name }];
}

/**
 * The request for the object's controller owner, if that owner is of the given kind (controller-runtime's
 * `EnqueueRequestForOwner` with `OnlyControllerOwner`). Like controller-runtime, the API group must match but the
 * version may differ. Owners live in the object's namespace, or are cluster-scoped.
 */
export function requestForControllerOwner(owner: ResourceKind): MapFunc<KubeObject> {
  const ownerGroup = groupOf(owner.apiVersion);
  return (object) => {
    const ref = controllerOwnerOf(object);
    if (!ref || ref.kind !== owner.kind || groupOf(ref.apiVersion) !== ownerGroup) return [];
    return [{ namespace: owner.namespaced ? object.metadata.namespace : undefined, name: ref.name }];
  };
}

function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/**
 * Turns informer callbacks into requests: filters each event through the predicates, maps the object (both old and
 * new object on updates, so a change of owner or reference re-queues both sides) and enqueues the keys.
 */
export function mappingEventHandler<T extends KubeObject>(
  map: MapFunc<T>,
  predicates: readonly Predicate<T>[],
  enqueue: (key: ObjectKey) => void,
): ResourceEventHandler<T> {
  const emit = (event: AnyEvent<T>, objects: readonly T[]): void => {
    if (!passesAll(predicates, event)) return;
    for (const object of objects) for (const key of map(object)) enqueue(key);
  };
  return {
    onAdd: (object) => emit({ kind: 'create', event: { object } }, [object]),
    onUpdate: (objectOld, objectNew) =>
      emit({ kind: 'update', event: { objectOld, objectNew } }, [objectOld, objectNew]),
    onDelete: (object, deleteStateUnknown) => emit({ kind: 'delete', event: { object, deleteStateUnknown } }, [object]),
  };
}
