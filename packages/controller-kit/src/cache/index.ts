export { Backoff, type BackoffOptions } from './backoff.js';
export * from './cache.js';
export * from './informer.js';
export * from './label-selector.js';
export * from './object.js';
export * from './reflector.js';
export * from './store.js';
export * from './transform.js';
export * from './watch-connection.js';
