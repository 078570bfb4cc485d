import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { QueueMetrics } from './queue-metrics.js';
import { registerOnce } from './register-once.js';

/** client-go's buckets for queue and work durations: 10 ns … 1000 s, ×10 each. */
const DURATION_BUCKETS = Array.from({ length: 12 }, (_, i) => 1e-8 * 10 ** i);

interface QueueSeries {
  readonly depth: Gauge<'name'>;
  readonly adds: Counter<'name'>;
  readonly retries: Counter<'name'>;
  readonly queueDuration: Histogram<'name'>;
  readonly workDuration: Histogram<'name'>;
}

/** Live queues per registry, read when Prometheus scrapes the in-flight gauges. */
const liveQueues = new WeakMap<Registry, Set<PrometheusQueueMetrics>>();

function seriesFor(registry: Registry): QueueSeries {
  const queues = liveQueues.get(registry) ?? new Set<PrometheusQueueMetrics>();
  liveQueues.set(registry, queues);
  registerOnce(
    registry,
    'workqueue_unfinished_work_seconds',
    () =>
      new Gauge({
        name: 'workqueue_unfinished_work_seconds',
        help: 'How many seconds of work has been done that is in progress and has not been observed by work_duration. Large values indicate stuck threads.',
        labelNames: ['name'],
        registers: [],
        collect(): void {
          for (const queue of queues) this.set({ name: queue.name }, queue.unfinishedWorkSeconds());
        },
      }),
  );
  registerOnce(
    registry,
    'workqueue_longest_running_processor_seconds',
    () =>
      new Gauge({
        name: 'workqueue_longest_running_processor_seconds',
        help: 'How many seconds has the longest running processor for workqueue been running.',
        labelNames: ['name'],
        registers: [],
        collect(): void {
          for (const queue of queues) this.set({ name: queue.name }, queue.longestRunningSeconds());
        },
      }),
  );
  return {
    depth: registerOnce(
      registry,
      'workqueue_depth',
      () =>
        new Gauge({ name: 'workqueue_depth', help: 'Current depth of workqueue', labelNames: ['name'], registers: [] }),
    ),
    adds: registerOnce(
      registry,
      'workqueue_adds_total',
      () =>
        new Counter({
          name: 'workqueue_adds_total',
          help: 'Total number of adds handled by workqueue',
          labelNames: ['name'],
          registers: [],
        }),
    ),
    retries: registerOnce(
      registry,
      'workqueue_retries_total',
      () =>
        new Counter({
          name: 'workqueue_retries_total',
          help: 'Total number of retries handled by workqueue',
          labelNames: ['name'],
          registers: [],
        }),
    ),
    queueDuration: registerOnce(
      registry,
      'workqueue_queue_duration_seconds',
      () =>
        new Histogram({
          name: 'workqueue_queue_duration_seconds',
          help: 'How long in seconds an item stays in workqueue before being requested',
          labelNames: ['name'],
          buckets: DURATION_BUCKETS,
          registers: [],
        }),
    ),
    workDuration: registerOnce(
      registry,
      'workqueue_work_duration_seconds',
      () =>
        new Histogram({
          name: 'workqueue_work_duration_seconds',
          help: 'How long in seconds processing an item from workqueue takes.',
          labelNames: ['name'],
          buckets: DURATION_BUCKETS,
          registers: [],
        }),
    ),
  };
}

/** `workqueue_*{name}` series for one queue, registered once per registry and shared by all queues on it. */
export class PrometheusQueueMetrics<T = string> implements QueueMetrics<T> {
  private readonly series: QueueSeries;
  private readonly addedAt = new Map<T, number>();
  private readonly startedAt = new Map<T, number>();

  constructor(
    readonly name: string,
    private readonly registry: Registry,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.series = seriesFor(registry);
    liveQueues.get(registry)?.add(this as PrometheusQueueMetrics<unknown> as PrometheusQueueMetrics);
    // Make the series visible (at zero) before the first event, like client-go does on queue creation.
    this.series.depth.set({ name }, 0);
    this.series.adds.inc({ name }, 0);
    this.series.retries.inc({ name }, 0);
  }

  added(item: T): void {
    this.series.adds.inc({ name: this.name });
    this.series.depth.inc({ name: this.name });
    if (!this.addedAt.has(item)) this.addedAt.set(item, this.now());
  }

  taken(item: T): void {
    this.series.depth.dec({ name: this.name });
    const addedAt = this.addedAt.get(item);
    if (addedAt !== undefined) {
      this.series.queueDuration.observe({ name: this.name }, (this.now() - addedAt) / 1000);
      this.addedAt.delete(item);
    }
    this.startedAt.set(item, this.now());
  }

  finished(item: T): void {
    const startedAt = this.startedAt.get(item);
    if (startedAt !== undefined) {
      this.series.workDuration.observe({ name: this.name }, (this.now() - startedAt) / 1000);
      this.startedAt.delete(item);
    }
  }

  retried(_item: T): void {
    this.series.retries.inc({ name: this.name });
  }

  unfinishedWorkSeconds(): number {
    const now = this.now();
    let total = 0;
    for (const startedAt of this.startedAt.values()) total += now - startedAt;
    return total / 1000;
  }

  longestRunningSeconds(): number {
    const now = this.now();
    let longest = 0;
    for (const startedAt of this.startedAt.values()) longest = Math.max(longest, now - startedAt);
    return longest / 1000;
  }

  /** Stops reporting the in-flight gauges for this queue (the controller stopped). */
  close(): void {
    liveQueues.get(this.registry)?.delete(this as PrometheusQueueMetrics<unknown> as PrometheusQueueMetrics);
  }
}
