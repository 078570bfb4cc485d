import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { registerOnce } from '../queue/register-once.js';

/** `conflict` is a stale-resourceVersion 409: reported as result `requeue`, and counted on its own. */
export type ReconcileOutcome = 'success' | 'error' | 'requeue' | 'requeue_after' | 'conflict';

/** controller-runtime's reconcile-time buckets. */
const RECONCILE_TIME_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25, 1.5, 1.75,
  2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];

/** Controller names per registry: the name labels every series, so two controllers must not share one. */
const namesInUse = new WeakMap<Registry, Set<string>>();

/** `controller_runtime_*` series for one controller; the metric objects are shared by all controllers on a registry. */
export class ControllerMetrics {
  private readonly total: Counter<'controller' | 'result'>;
  private readonly errors: Counter<'controller'>;
  private readonly conflicts: Counter<'controller'>;
  private readonly time: Histogram<'controller'>;
  private readonly activeWorkers: Gauge<'controller'>;

  constructor(
    private readonly controller: string,
    registry: Registry,
    maxConcurrentReconciles: number,
  ) {
    const names = namesInUse.get(registry) ?? new Set<string>();
    if (names.has(controller)) {
      throw new Error(
        `controller name "${controller}" is already used on this metrics registry: names label the metrics and must be unique`,
      );
    }
    names.add(controller);
    namesInUse.set(registry, names);
    this.total = registerOnce(
      registry,
      'controller_runtime_reconcile_total',
      () =>
        new Counter({
          name: 'controller_runtime_reconcile_total',
          help: 'Total number of reconciliations per controller',
          labelNames: ['controller', 'result'],
          registers: [],
        }),
    );
    this.errors = registerOnce(
      registry,
      'controller_runtime_reconcile_errors_total',
      () =>
        new Counter({
          name: 'controller_runtime_reconcile_errors_total',
          help: 'Total number of reconciliation errors per controller',
          labelNames: ['controller'],
          registers: [],
        }),
    );
    // Not a controller-runtime series: controller-runtime reports these conflicts as errors (see Controller).
    this.conflicts = registerOnce(
      registry,
      'controller_kit_reconcile_conflicts_total',
      () =>
        new Counter({
          name: 'controller_kit_reconcile_conflicts_total',
          help: 'Total number of reconciliations per controller that ended in a stale-resourceVersion conflict and were requeued',
          labelNames: ['controller'],
          registers: [],
        }),
    );
    this.time = registerOnce(
      registry,
      'controller_runtime_reconcile_time_seconds',
      () =>
        new Histogram({
          name: 'controller_runtime_reconcile_time_seconds',
          help: 'Length of time per reconciliation per controller',
          labelNames: ['controller'],
          buckets: RECONCILE_TIME_BUCKETS,
          registers: [],
        }),
    );
    this.activeWorkers = registerOnce(
      registry,
      'controller_runtime_active_workers',
      () =>
        new Gauge({
          name: 'controller_runtime_active_workers',
          help: 'Number of currently used workers per controller',
          labelNames: ['controller'],
          registers: [],
        }),
    );
    const maxConcurrent = registerOnce(
      registry,
      'controller_runtime_max_concurrent_reconciles',
      () =>
        new Gauge({
          name: 'controller_runtime_max_concurrent_reconciles',
          help: 'Maximum number of concurrent reconciles per controller',
          labelNames: ['controller'],
          registers: [],
        }),
    );
    maxConcurrent.set({ controller }, maxConcurrentReconciles);
    this.activeWorkers.set({ controller }, 0);
    // Like controller-runtime, every result series exists from the start so rate() queries see zeros, not gaps.
    for (const result of ['success', 'error', 'requeue', 'requeue_after'] as const) {
      this.total.inc({ controller, result }, 0);
    }
    this.errors.inc({ controller }, 0);
    this.conflicts.inc({ controller }, 0);
  }

  workerStarted(): void {
    this.activeWorkers.inc({ controller: this.controller });
  }

  workerFinished(): void {
    this.activeWorkers.dec({ controller: this.controller });
  }

  observe(outcome: ReconcileOutcome, seconds: number): void {
    this.total.inc({ controller: this.controller, result: outcome === 'conflict' ? 'requeue' : outcome });
    if (outcome === 'error') this.errors.inc({ controller: this.controller });
    if (outcome === 'conflict') this.conflicts.inc({ controller: this.controller });
    this.time.observe({ controller: this.controller }, seconds);
  }
}
