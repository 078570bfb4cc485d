export * from './controller.js';
export * from './controller-metrics.js';
export * from './event-handlers.js';
export * from './predicate.js';
export * from './reconciler.js';
