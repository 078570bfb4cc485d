import type { Invocation } from '../args.js';
import type { ListScope } from '../kube/list.js';
import type { PoolRow } from '../kube/pools.js';
import { utilisationBar } from '../view/bar.js';
import { ageOf } from '../view/duration.js';
import { exhaustionEtaMs, formatEta } from '../view/eta.js';
import type { Listing } from '../view/output.js';

function count(value: number | undefined): string {
  return value === undefined ? '—' : String(value);
}

function readyCell(row: PoolRow): string {
  return row.ready?.status ?? 'Unknown';
}

/** The `pools` listing of what `readPools` read, at `nowMs`. */
export function poolsListing(pools: readonly PoolRow[], invocation: Invocation, nowMs: number): Listing {
  const sorted = [...pools].sort(
    (a, b) =>
      (a.namespace ?? '').localeCompare(b.namespace ?? '') ||
      a.kind.localeCompare(b.kind) ||
      a.name.localeCompare(b.name),
  );
  const shown = sorted.map((pool) => {
    const etaMs =
      pool.counts === undefined
        ? undefined
        : exhaustionEtaMs({
            free: pool.counts.free,
            createdMs: pool.addressCreatedMs,
            nowMs,
            windowMs: invocation.windowMs,
          });
    return { pool, etaMs };
  });
  const withNamespace = invocation.allNamespaces;
  const base = ['KIND', 'NAME', 'TOTAL', 'USED', 'FREE', 'OUT-OF-RANGE', 'UTILISATION', 'ETA', 'READY'];
  const headers = withNamespace ? ['NAMESPACE', ...base] : base;
  const rowOf = ({ pool, etaMs }: (typeof shown)[number]): string[] => {
    const cells = [
      pool.kind,
      pool.name,
      count(pool.counts?.total),
      count(pool.counts?.used),
      count(pool.counts?.free),
      count(pool.counts?.outOfRange),
      pool.counts === undefined ? '—' : utilisationBar(pool.counts.used, pool.counts.total),
      pool.counts === undefined ? '—' : formatEta(etaMs),
      readyCell(pool),
    ];
    return withNamespace ? [pool.namespace ?? '', ...cells] : cells;
  };
  const rows = shown.map(rowOf);
  return {
    kind: 'PoolList',
    items: shown.map(({ pool, etaMs }) => ({
      apiGroup: pool.apiGroup,
      kind: pool.kind,
      ...(pool.namespace === undefined ? {} : { namespace: pool.namespace }),
      name: pool.name,
      ...(pool.counts === undefined ? {} : { counts: pool.counts }),
      ready: pool.ready ?? null,
      recentAllocations: pool.addressCreatedMs.filter((ms) => ms > nowMs - invocation.windowMs).length,
      windowSeconds: invocation.windowMs / 1000,
      exhaustionEtaSeconds: etaMs === undefined ? null : Math.round(etaMs / 1000),
    })),
    headers,
    rows,
    wideHeaders: [...headers, 'REASON', 'AGE'],
    wideRows: shown.map((entry, index) => [
      ...(rows[index] ?? []),
      entry.pool.ready?.reason ?? '',
      ageOf(entry.pool.createdAt, nowMs),
    ]),
    empty: 'No pools found.',
  };
}

/** The list scope of a command: -A all namespaces, -n the one named, else the context's. */
export function scopeOf(invocation: Invocation, defaultNamespace: string): ListScope {
  return {
    namespace: invocation.allNamespaces ? undefined : (invocation.namespace ?? defaultNamespace),
    pageSize: invocation.pageSize,
  };
}
