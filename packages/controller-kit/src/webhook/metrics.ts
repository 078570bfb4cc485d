import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { registerOnce } from '../queue/register-once.js';

/** The series controller-runtime's webhook server exports, under the same names so existing dashboards work. */
export interface WebhookMetrics {
  /** `controller_runtime_webhook_requests_total{webhook,code}`: requests by path and HTTP status code. */
  readonly requests: Counter<'webhook' | 'code'>;
  /** `controller_runtime_webhook_latency_seconds{webhook}`: time from request to response. */
  readonly latency: Histogram<'webhook'>;
  /** `controller_runtime_webhook_requests_in_flight{webhook}`: requests being served right now. */
  readonly inFlight: Gauge<'webhook'>;
}

/**
 * The webhook series on `registry`. Several servers (or a server restarted in tests) may share one registry; the
 * first registration wins and later servers reuse its series.
 */
export function webhookMetrics(registry: Registry): WebhookMetrics {
  return {
    requests: registerOnce(
      registry,
      'controller_runtime_webhook_requests_total',
      () =>
        new Counter({
          name: 'controller_runtime_webhook_requests_total',
          help: 'Total number of admission requests by HTTP status code.',
          labelNames: ['webhook', 'code'],
          registers: [],
        }),
    ),
    latency: registerOnce(
      registry,
      'controller_runtime_webhook_latency_seconds',
      () =>
        new Histogram({
          name: 'controller_runtime_webhook_latency_seconds',
          help: 'Histogram of the latency of processing admission requests',
          labelNames: ['webhook'],
          // Prometheus' default buckets, which controller-runtime uses too (5 ms ... 10 s).
          buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
          registers: [],
        }),
    ),
    inFlight: registerOnce(
      registry,
      'controller_runtime_webhook_requests_in_flight',
      () =>
        new Gauge({
          name: 'controller_runtime_webhook_requests_in_flight',
          help: 'Current number of admission requests being served.',
          labelNames: ['webhook'],
          registers: [],
        }),
    ),
  };
}

/** controller-runtime's `certwatcher` series: a rising error count means rotations are not being picked up. */
export interface CertWatcherMetrics {
  /** `certwatcher_read_certificate_total`: every read of the certificate pair, initial and reloads. */
  readonly reads: Counter;
  /** `certwatcher_read_certificate_errors_total`: reads that failed (missing file, bad PEM, key mismatch). */
  readonly readErrors: Counter;
}

export function certWatcherMetrics(registry: Registry): CertWatcherMetrics {
  return {
    reads: registerOnce(
      registry,
      'certwatcher_read_certificate_total',
      () =>
        new Counter({
          name: 'certwatcher_read_certificate_total',
          help: 'Total number of certificate reads',
          registers: [],
        }),
    ),
    readErrors: registerOnce(
      registry,
      'certwatcher_read_certificate_errors_total',
      () =>
        new Counter({
          name: 'certwatcher_read_certificate_errors_total',
          help: 'Total number of certificate read errors',
          registers: [],
        }),
    ),
  };
}
