// @tally-ipam/controller-kit/controller: controllers, reconcilers, their watches' map functions and predicates. The
// event handlers behind a watch and the controller metrics stay unexported.
export { Controller, type ControllerOptions, type WatchOptions } from './controller.js';
export type { MapFunc } from './event-handlers.js';
export {
  and,
  annotationChangedPredicate,
  type CreateEvent,
  type DeleteEvent,
  type GenericEvent,
  generationChangedPredicate,
  not,
  or,
  type Predicate,
  type UpdateEvent,
} from './predicate.js';
export { type ReconcileContext, type Reconciler, type Request, type Result, reconcilerFunc } from './reconciler.js';
