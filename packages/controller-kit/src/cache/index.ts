// @tally-ipam/controller-kit/cache: shared informers over a reflector, their stores and indexes, the objects they
// hold. The reflector, its back-off and the wire schemas are plumbing behind SharedInformer and stay unexported.
export * from './cache.js';
export * from './compact.js';
export * from './informer.js';
export * from './label-selector.js';
export * from './list-items.js';
export * from './object.js';
export * from './same-json.js';
export * from './store.js';
export * from './transform.js';
export { WatchConnection, type WatchRequest, WatchStalledError } from './watch-connection.js';
