import type { Metric, Registry } from 'prom-client';

/**
 * Returns the metric already registered under `name`, or registers the one `create` builds. Several controllers share
 * one registry and each asks for the same `controller_runtime_*` / `workqueue_*` series; prom-client throws on a
 * second registration, so the first one wins and later callers reuse it.
 */
export function registerOnce<M extends Metric>(registry: Registry, name: string, create: () => M): M {
  const existing = registry.getSingleMetric(name);
  if (existing) return existing as M;
  const metric = create();
  registry.registerMetric(metric);
  return metric;
}
