// Admission webhooks: an HTTPS server for AdmissionReview requests, typed validating handlers, and the
// ValidatingWebhookConfiguration that points the API server at them.
export {
  type AdmissionDecision,
  type AdmissionGroupVersionKind,
  type AdmissionGroupVersionResource,
  type AdmissionOperation,
  type AdmissionRequest,
  type AdmissionReviewResponse,
  type AdmissionStatus,
  type AdmissionUserInfo,
  admissionOperations,
  admissionReviewResponse,
  allowed,
  type DeniedOptions,
  denied,
  specOf,
  specUnchanged,
} from './admission-review.js';
export {
  CertWatcher,
  type CertWatcherOptions,
  loadServingCertificate,
  type ServingCertificate,
} from './cert-watcher.js';
export {
  CERT_MANAGER_INJECT_CA_FROM,
  type ServiceClientMode,
  type UrlClientMode,
  type ValidatingWebhookConfigurationOptions,
  type ValidatingWebhookSpec,
  validatingWebhookConfiguration,
  type WebhookRule,
} from './configuration.js';
export { parseWebhookFlags, type WebhookFlags, webhookFlagsUsage } from './flags.js';
export { type CertWatcherMetrics, certWatcherMetrics, type WebhookMetrics, webhookMetrics } from './metrics.js';
export {
  DEFAULT_WEBHOOK_CERT_DIR,
  DEFAULT_WEBHOOK_PORT,
  DEFAULT_WEBHOOK_SHUTDOWN_DELAY_MS,
  DEFAULT_WEBHOOK_SHUTDOWN_TIMEOUT_MS,
  MAX_WEBHOOK_SHUTDOWN_DELAY_MS,
  WebhookServer,
  type WebhookServerAddress,
  type WebhookServerOptions,
} from './server.js';
export { type AdmissionHandler, type ValidatingHandlerOptions, validatingHandler } from './validating-handler.js';
