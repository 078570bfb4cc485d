// @tally-ipam/controller-kit/client: the typed client, API errors, Events, finalizers, owner references and the
// transport it runs on. Credential and path plumbing stays unexported.
export * from './client.js';
export {
  asKubeApiError,
  isAlreadyExists,
  isConflict,
  isGone,
  isInvalid,
  isNotFound,
  isStaleResourceVersionConflict,
  KubeApiError,
  KubeRequestError,
  type RequestTarget,
  type StatusCause,
} from './errors.js';
export * from './events.js';
export * from './finalizers.js';
export * from './object-schema.js';
export * from './owner-references.js';
export { type RequestRateLimit, setRequestRateLimit } from './request-rate-limit.js';
export { type ObjectKey, objectKeyString, parseObjectKey, type ResourceKind } from './resource.js';
export {
  type HttpMethod,
  type KubeRequest,
  KubeTransport,
  type QueryValue,
  type TransportOptions,
} from './transport.js';
