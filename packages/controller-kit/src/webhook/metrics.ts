import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { registerOnce } from '../queue/register-once.js';

/**
 * The series controller-runtime's webhook server exports, under the same names so existing dashboards work, and the
 * kit's own `controller_kit_webhook_*` series for what controller-runtime has none for (bodies still arriving,
 * evictions).
 */
export interface WebhookMetrics {
  /** `controller_runtime_webhook_requests_total{webhook,code}`: requests by path and HTTP status code. */
  readonly requests: Counter<'webhook' | 'code'>;
  /** `controller_runtime_webhook_latency_seconds{webhook}`: time from request to response. */
  readonly latency: Histogram<'webhook'>;
  /** `controller_runtime_webhook_requests_in_flight{webhook}`: requests being served right now. */
  readonly inFlight: Gauge<'webhook'>;
  /**
   * `controller_kit_webhook_receiving_requests`: requests whose body is still arriving. They hold no concurrency
   * slot; a high value with few reviews answered points at slow or stalled clients.
   */
  readonly receiving: Gauge;
  /** `controller_kit_webhook_receiving_bytes`: body bytes held for those requests (bounded by the server's budget). */
  readonly receivingBytes: Gauge;
  /**
   * `controller_kit_webhook_evictions_total{reason}`: connections the server closed to make room — `connections` when
   * a new connection found `maxConnections` open, `body_bytes` when a body would have passed the byte budget.
   */
  readonly evictions: Counter<'reason'>;
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
    receiving: registerOnce(
      registry,
      'controller_kit_webhook_receiving_requests',
      () =>
        new Gauge({
          name: 'controller_kit_webhook_receiving_requests',
          help: 'Admission requests whose body is still being received (they hold no concurrency slot yet).',
          registers: [],
        }),
    ),
    receivingBytes: registerOnce(
      registry,
      'controller_kit_webhook_receiving_bytes',
      () =>
        new Gauge({
          name: 'controller_kit_webhook_receiving_bytes',
          help: 'Body bytes held for admission requests still being received.',
          registers: [],
        }),
    ),
    evictions: registerOnce(
      registry,
      'controller_kit_webhook_evictions_total',
      () =>
        new Counter({
          name: 'controller_kit_webhook_evictions_total',
          help: 'Connections the webhook server closed to make room, by what was full (connections, body_bytes).',
          labelNames: ['reason'],
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
