import { setTimeout as delay } from 'node:timers/promises';
import { TALLY_PREFIX_POOL_KIND } from '@tally-ipam/api-types';
import type { Client, KubeObject } from '@tally-ipam/controller-kit';
import { ADDRESSES, CLAIMS, DEMO_CLAIMS, DEMO_NAMESPACE, DEMO_POOLS, type DemoPool } from './demo-objects.js';

export interface ClaimRow {
  readonly claim: string;
  readonly pool: string;
  readonly address: string;
  readonly gateway: string;
  readonly note: string;
}

export interface PoolRow {
  readonly pool: string;
  readonly total: string;
  readonly used: string;
  readonly free: string;
}

interface Counts {
  readonly total?: number;
  readonly used?: number;
  readonly free?: number;
}

type Loose = KubeObject & { readonly spec?: Record<string, unknown>; readonly status?: Record<string, unknown> };

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
}

function text(value: unknown): string {
  return typeof value === 'string' || typeof value === 'number' ? String(value) : '';
}

/** Lays rows out in columns, as `kubectl get` does. */
export function formatTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join('   ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

/** Pool counts live in `status.ipAddresses` (IP pools) or `status.prefixes` (prefix pools). */
function countsOf(pool: DemoPool, object: Loose): Counts | undefined {
  const status = record(object.status);
  const counts = record(pool.kind === TALLY_PREFIX_POOL_KIND ? status.prefixes : status.ipAddresses);
  return typeof counts.used === 'number' ? (counts as Counts) : undefined;
}

export interface DemoReport {
  readonly claims: readonly ClaimRow[];
  readonly pools: readonly PoolRow[];
}

/**
 * Waits until every demo claim has its IPAddress and every pool's status counts them, then reads the rows. Polls with
 * a deadline: the controller works asynchronously, and a stuck demo must say what it is waiting for.
 */
export async function waitForDemoReport(client: Client, signal: AbortSignal, timeoutMs = 120_000): Promise<DemoReport> {
  const deadline = Date.now() + timeoutMs;
  let waitingFor = 'the first read';
  while (!signal.aborted) {
    const report = await readReport(client);
    if (typeof report !== 'string') return report;
    waitingFor = report;
    if (Date.now() > deadline)
      throw new Error(`the demo did not settle within ${timeoutMs / 1000} s: waiting for ${waitingFor}`);
    await delay(250, undefined, { signal }).catch(() => undefined);
  }
  throw new Error(`stopped while waiting for ${waitingFor}`);
}

/** The report, or a description of what is still missing. */
async function readReport(client: Client): Promise<DemoReport | string> {
  const claims = (await client.list(CLAIMS, { namespace: DEMO_NAMESPACE })).items as Loose[];
  const addresses = (await client.list(ADDRESSES, { namespace: DEMO_NAMESPACE })).items as Loose[];
  const claimRows: ClaimRow[] = [];
  for (const demo of DEMO_CLAIMS) {
    const claim = claims.find((object) => object.metadata.name === demo.name);
    const addressName = text(record(record(claim?.status).addressRef).name);
    const address = addresses.find((object) => object.metadata.name === addressName);
    if (!claim || !addressName || !address) return `claim ${demo.name} to be bound`;
    const spec = record(address.spec);
    claimRows.push({
      claim: demo.name,
      pool: `${demo.pool.kind}/${demo.pool.name}`,
      address: `${text(spec.address)}/${text(spec.prefix)}`,
      gateway: text(spec.gateway) || '-',
      note: demo.note,
    });
  }
  const poolRows: PoolRow[] = [];
  for (const pool of DEMO_POOLS) {
    const object = (await client.get(pool.resource, { namespace: DEMO_NAMESPACE, name: pool.name })) as Loose;
    const counts = countsOf(pool, object);
    const expectedUsed = DEMO_CLAIMS.filter((claim) => claim.pool === pool).length;
    if (!counts || counts.used !== expectedUsed)
      return `the status of ${pool.kind} ${pool.name} to count ${expectedUsed} used`;
    poolRows.push({
      pool: `${pool.kind}/${pool.name}`,
      total: text(counts.total),
      used: text(counts.used),
      free: text(counts.free),
    });
  }
  return { claims: claimRows, pools: poolRows };
}

export function formatReport(report: DemoReport): string {
  const claims = formatTable(
    ['CLAIM', 'POOL', 'ADDRESS', 'GATEWAY', 'WHY'],
    report.claims.map((row) => [row.claim, row.pool, row.address, row.gateway, row.note]),
  );
  const pools = formatTable(
    ['POOL', 'TOTAL', 'USED', 'FREE'],
    report.pools.map((row) => [row.pool, row.total, row.used, row.free]),
  );
  return `${claims}\n\n${pools}`;
}
