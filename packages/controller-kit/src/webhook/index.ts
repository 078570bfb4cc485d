// Admission webhooks: an HTTPS server for AdmissionReview requests, typed validating handlers, and the
// ValidatingWebhookConfiguration that points the API server at them.
export {
  type AdmissionDecision,
  type AdmissionOperation,
  type AdmissionRequest,
  type AdmissionStatus,
  admissionOperations,
  allowed,
  type DeniedOptions,
  denied,
  specOf,
  specUnchanged,
} from './admission-review.js';
export {
  type ServiceClientMode,
  type UrlClientMode,
  type ValidatingWebhookConfigurationOptions,
  type ValidatingWebhookSpec,
  validatingWebhookConfiguration,
  type WebhookRule,
} from './configuration.js';
export type { WebhookFlags } from './flags.js';
export {
  DEFAULT_WEBHOOK_CERT_DIR,
  WebhookServer,
  type WebhookServerAddress,
  type WebhookServerOptions,
} from './server.js';
export { type AdmissionHandler, type ValidatingHandlerOptions, validatingHandler } from './validating-handler.js';
