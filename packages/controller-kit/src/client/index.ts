// @tally-ipam/controller-kit/client: the typed client, API errors, Events, finalizers, owner references and the
// transport it runs on. Credential and path plumbing stays unexported.
export {
  type ApplyOptions,
  Client,
  type ClientListOptions,
  type ClientOptions,
  type DeleteOptions,
  type JsonPatchOperation,
  type ObjectList,
  type PatchOptions,
  type RequestOptions,
  type WriteOptions,
} from './client.js';
export {
  asKubeApiError,
  isAlreadyExists,
  isConflict,
  isGone,
  isInvalid,
  isNotFound,
  KubeApiError,
  KubeRequestError,
  type RequestTarget,
  type StatusCause,
} from './errors.js';
export {
  EVENTS_RESOURCE,
  type EventInput,
  EventRecorder,
  type EventRecorderOptions,
  type EventType,
  microTime,
} from './events.js';
export { addFinalizer, hasFinalizer, removeFinalizer } from './finalizers.js';
export {
  compiledSchema,
  type ObjectInput,
  type ObjectOf,
  parsesToItsInput,
  type TypedResourceKind,
  typedResource,
} from './object-schema.js';
export {
  AlreadyOwnedError,
  findOwnerReference,
  isControlledBy,
  isOwnedBy,
  type OwnerReferenceOptions,
  ownerReferenceTo,
  removeOwnerReference,
  setControllerReference,
  setOwnerReference,
} from './owner-references.js';
export { type RequestRateLimit, setRequestRateLimit } from './request-rate-limit.js';
export { type ObjectKey, parseObjectKey, type ResourceKind } from './resource.js';
export {
  type HttpMethod,
  type KubeRequest,
  KubeTransport,
  type QueryValue,
  type TransportOptions,
} from './transport.js';
