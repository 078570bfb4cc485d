import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/**
 * The provider's Prometheus metrics. Registered once per registry: two providers sharing a registry (tests, or a
 * process restarting its manager) share the series instead of failing on a duplicate name.
 */
export interface ProviderMetrics {
  /** `tally_ipam_pool_addresses{kind,namespace,name,state=total|used|free|out_of_range}` */
  readonly poolAddresses: Gauge<'kind' | 'namespace' | 'name' | 'state'>;
  /** `tally_ipam_allocations_total{kind,result=allocated|exhausted|failed|conflict}` */
  readonly allocations: Counter<'kind' | 'result'>;
  /** `tally_ipam_releases_total{kind}` */
  readonly releases: Counter<'kind'>;
  /** `tally_ipam_allocation_duration_seconds{kind}`: choosing, holding and creating the IPAddress. */
  readonly allocationDuration: Histogram<'kind'>;
  /** `tally_ipam_release_duration_seconds{kind}`: deleting the IPAddress and releasing the holding. */
  readonly releaseDuration: Histogram<'kind'>;
}

const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

function once<T>(registry: Registry, name: string, make: () => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? make();
}

export function providerMetrics(registry: Registry): ProviderMetrics {
  return {
    poolAddresses: once(
      registry,
      'tally_ipam_pool_addresses',
      () =>
        new Gauge({
          name: 'tally_ipam_pool_addresses',
          help: 'Addresses (prefixes for prefix pools) of a Tally pool by state: total, used, free, out_of_range.',
          labelNames: ['kind', 'namespace', 'name', 'state'] as const,
          registers: [registry],
        }),
    ),
    allocations: once(
      registry,
      'tally_ipam_allocations_total',
      () =>
        new Counter({
          name: 'tally_ipam_allocations_total',
          help: 'Allocation attempts by pool kind and result (allocated, exhausted, failed, conflict).',
          labelNames: ['kind', 'result'] as const,
          registers: [registry],
        }),
    ),
    releases: once(
      registry,
      'tally_ipam_releases_total',
      () =>
        new Counter({
          name: 'tally_ipam_releases_total',
          help: 'Addresses released by deleted claims, by pool kind.',
          labelNames: ['kind'] as const,
          registers: [registry],
        }),
    ),
    allocationDuration: once(
      registry,
      'tally_ipam_allocation_duration_seconds',
      () =>
        new Histogram({
          name: 'tally_ipam_allocation_duration_seconds',
          help: 'Time from choosing an address to its IPAddress existing (holding and IPAddress creates included).',
          labelNames: ['kind'] as const,
          buckets: DURATION_BUCKETS,
          registers: [registry],
        }),
    ),
    releaseDuration: once(
      registry,
      'tally_ipam_release_duration_seconds',
      () =>
        new Histogram({
          name: 'tally_ipam_release_duration_seconds',
          help: 'Time to release an address: IPAddress deleted, ledger entry released or dropped, claim finalizer removed.',
          labelNames: ['kind'] as const,
          buckets: DURATION_BUCKETS,
          registers: [registry],
        }),
    ),
  };
}
