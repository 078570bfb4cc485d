import { type LabelSelector, matchesLabelSelector } from '../cache/label-selector.js';
import type { KubeObject } from '../cache/object.js';

export interface CreateEvent<T extends KubeObject = KubeObject> {
  readonly object: T;
}

export interface UpdateEvent<T extends KubeObject = KubeObject> {
  readonly objectOld: T;
  readonly objectNew: T;
}

export interface DeleteEvent<T extends KubeObject = KubeObject> {
  readonly object: T;
  /** True when the delete was inferred from a relist, so `object` is the last state the cache saw, not the final one. */
  readonly deleteStateUnknown: boolean;
}

/** An event from outside the cache (or a periodic resync). */
export interface GenericEvent<T extends KubeObject = KubeObject> {
  readonly object: T;
}

/**
 * An event filter, as in controller-runtime: an event reaches the controller's queue only if every predicate of the
 * watch returns true. A missing function lets that kind of event through (controller-runtime's `predicate.Funcs`).
 */
export interface Predicate<T extends KubeObject = KubeObject> {
  create?(event: CreateEvent<T>): boolean;
  update?(event: UpdateEvent<T>): boolean;
  delete?(event: DeleteEvent<T>): boolean;
  generic?(event: GenericEvent<T>): boolean;
}

export type EventKind = 'create' | 'update' | 'delete' | 'generic';

/** The event with the kind that tells which predicate function applies. */
export type AnyEvent<T extends KubeObject = KubeObject> =
  | { readonly kind: 'create'; readonly event: CreateEvent<T> }
  | { readonly kind: 'update'; readonly event: UpdateEvent<T> }
  | { readonly kind: 'delete'; readonly event: DeleteEvent<T> }
  | { readonly kind: 'generic'; readonly event: GenericEvent<T> };

/** Applies one predicate to one event; absent functions pass. */
export function evaluatePredicate<T extends KubeObject>(predicate: Predicate<T>, event: AnyEvent<T>): boolean {
  switch (event.kind) {
    case 'create':
      return predicate.create?.(event.event) ?? true;
    case 'update':
      return predicate.update?.(event.event) ?? true;
    case 'delete':
      return predicate.delete?.(event.event) ?? true;
    case 'generic':
      return predicate.generic?.(event.event) ?? true;
  }
}

/** True when every predicate passes the event (an empty list passes everything). */
export function passesAll<T extends KubeObject>(predicates: readonly Predicate<T>[], event: AnyEvent<T>): boolean {
  return predicates.every((predicate) => evaluatePredicate(predicate, event));
}

/** A predicate from one function applied to every event's object (the new object for updates). */
export function newPredicateFuncs<T extends KubeObject = KubeObject>(filter: (object: T) => boolean): Predicate<T> {
  return {
    create: (event) => filter(event.object),
    update: (event) => filter(event.objectNew),
    delete: (event) => filter(event.object),
    generic: (event) => filter(event.object),
  };
}

/** All predicates must pass. */
export function and<T extends KubeObject = KubeObject>(...predicates: readonly Predicate<T>[]): Predicate<T> {
  return {
    create: (event) => passesAll(predicates, { kind: 'create', event }),
    update: (event) => passesAll(predicates, { kind: 'update', event }),
    delete: (event) => passesAll(predicates, { kind: 'delete', event }),
    generic: (event) => passesAll(predicates, { kind: 'generic', event }),
  };
}

/** At least one predicate must pass (an empty `or` passes nothing, like controller-runtime's). */
export function or<T extends KubeObject = KubeObject>(...predicates: readonly Predicate<T>[]): Predicate<T> {
  const any = (event: AnyEvent<T>): boolean => predicates.some((predicate) => evaluatePredicate(predicate, event));
  return {
    create: (event) => any({ kind: 'create', event }),
    update: (event) => any({ kind: 'update', event }),
    delete: (event) => any({ kind: 'delete', event }),
    generic: (event) => any({ kind: 'generic', event }),
  };
}

/** Inverts a predicate. */
export function not<T extends KubeObject = KubeObject>(predicate: Predicate<T>): Predicate<T> {
  return {
    create: (event) => !evaluatePredicate(predicate, { kind: 'create', event }),
    update: (event) => !evaluatePredicate(predicate, { kind: 'update', event }),
    delete: (event) => !evaluatePredicate(predicate, { kind: 'delete', event }),
    generic: (event) => !evaluatePredicate(predicate, { kind: 'generic', event }),
  };
}

/**
 * Lets updates through only when `metadata.generation` changed, i.e. the spec changed (status and metadata writes
 * don't bump it). Create, delete and generic events pass. As in controller-runtime, don't use it on resources without
 * generation tracking, or updates are never seen.
 */
export function generationChangedPredicate<T extends KubeObject = KubeObject>(): Predicate<T> {
  return {
    update: ({ objectOld, objectNew }) => objectOld.metadata.generation !== objectNew.metadata.generation,
  };
}

/** Lets updates through only when the annotations changed. */
export function annotationChangedPredicate<T extends KubeObject = KubeObject>(): Predicate<T> {
  return {
    update: ({ objectOld, objectNew }) =>
      !sameStringMap(objectOld.metadata.annotations, objectNew.metadata.annotations),
  };
}

/** Lets updates through only when the labels changed. */
export function labelChangedPredicate<T extends KubeObject = KubeObject>(): Predicate<T> {
  return {
    update: ({ objectOld, objectNew }) => !sameStringMap(objectOld.metadata.labels, objectNew.metadata.labels),
  };
}

/** Passes events whose object matches the selector (for updates: the new object). */
export function labelSelectorPredicate<T extends KubeObject = KubeObject>(selector: LabelSelector): Predicate<T> {
  return newPredicateFuncs((object: T) => matchesLabelSelector(selector, object.metadata.labels));
}

function sameStringMap(
  a: Readonly<Record<string, string>> | undefined,
  b: Readonly<Record<string, string>> | undefined,
): boolean {
  const left = a ?? {};
  const right = b ?? {};
  const leftKeys = Object.keys(left);
  if (leftKeys.length !== Object.keys(right).length) return false;
  return leftKeys.every((key) => Object.hasOwn(right, key) && left[key] === right[key]);
}
