// @tally-ipam/controller-kit/controller: controllers, reconcilers, their watches, event handlers and predicates.
export * from './controller.js';
export * from './controller-metrics.js';
export * from './event-handlers.js';
export {
  type AnyEvent,
  and,
  annotationChangedPredicate,
  type CreateEvent,
  type DeleteEvent,
  type EventKind,
  type GenericEvent,
  generationChangedPredicate,
  labelChangedPredicate,
  labelSelectorPredicate,
  newPredicateFuncs,
  not,
  or,
  type Predicate,
  type UpdateEvent,
} from './predicate.js';
export * from './reconciler.js';
