// @tally-ipam/controller-kit/cache: shared informers over a reflector, their stores and indexes, the objects they
// hold. The reflector, its back-off and the wire schemas are plumbing behind SharedInformer and stay unexported.
export { AssumedObjects } from './assumed-objects.js';
export {
  Cache,
  type CacheListOptions,
  type CacheOptions,
  decodeCompacted,
  type InformerOptions,
  type InformerScope,
} from './cache.js';
export { compactObject, StringInterner } from './compact.js';
export {
  type HandlerRegistration,
  type InformerConfig,
  type ResourceEventHandler,
  SharedInformer,
} from './informer.js';
export { type LabelSelector, type LabelSelectorRequirement, matchesLabelSelector } from './label-selector.js';
export { ListItemSplitter, type ListItemSplitterOptions } from './list-items.js';
export {
  controllerOwnerOf,
  isNewer,
  type KubeObject,
  keyOf,
  type ObjectMeta,
  type OwnerReference,
} from './object.js';
export { sameJSON } from './same-json.js';
export {
  type Indexers,
  type IndexFunc,
  indexByNamespace,
  indexByOwnerUID,
  NAMESPACE_INDEX,
  OWNER_UID_INDEX,
  Store,
} from './store.js';
export { dropManagedFields, type Transform } from './transform.js';
export { WatchConnection, type WatchRequest } from './watch-connection.js';
