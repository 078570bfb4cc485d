// @tally-ipam/controller-kit/capi: the one home of the Cluster API helpers every provider reconciler uses: the
// Cluster an object belongs to, pause (the Cluster's spec.paused, the paused annotation) and the Paused condition,
// metav1.Condition arithmetic and Ready summaries, CAPI's usual predicates, and Cluster API's names.
export * from './conditions.js';
export * from './constants.js';
export * from './pause.js';
export * from './paused-condition.js';
export * from './predicates.js';
export * from './summary.js';
