import { ageOf } from './duration.js';
import { renderTable } from './table.js';

/** What `why` found, already looked up: the text and the json/yaml document are both made from it. */
export interface WhyReport {
  readonly claim: {
    readonly namespace: string;
    readonly name: string;
    readonly address: string | undefined;
    readonly addressName: string | undefined;
  };
  readonly conditions: readonly {
    type: string;
    status: string;
    reason: string;
    message: string;
    lastTransitionTime: string;
  }[];
  readonly pool: {
    readonly kind: string;
    readonly name: string;
    readonly namespace: string | undefined;
    readonly state: string;
    readonly ready: { status: string; reason: string; message: string } | undefined;
    readonly paused: readonly string[];
    readonly exhausted: boolean;
    readonly counts: { total: number; used: number; free: number; outOfRange: number } | undefined;
  };
  /** Why the controller skips the claim itself; empty when it does not. */
  readonly claimPaused: readonly string[];
  readonly cluster: { readonly name: string; readonly state: string } | undefined;
  readonly events: readonly {
    type: string;
    reason: string;
    time: string | undefined;
    from: string;
    note: string;
    count: number;
  }[];
  readonly lastWrite: { manager: string; operation: string; subresource: string; time: string | undefined } | undefined;
}

/** A table of the screen, indented under its heading; `<none>` when it has no rows. */
function section(headers: readonly string[], rows: readonly (readonly string[])[]): string[] {
  return rows.length === 0 ? ['  <none>'] : renderTable(headers, rows).map((line) => `  ${line}`);
}

function yesNo(reasons: readonly string[]): string {
  return reasons.length === 0 ? 'no' : `yes: ${reasons.join('; ')}`;
}

/** The verdict line: what the claim is waiting for, or its address. */
export function verdict(report: WhyReport): string {
  const ready = report.conditions.find((condition) => condition.type === 'Ready');
  if (report.claimPaused.length > 0 || report.pool.paused.length > 0)
    return 'Waiting: reconciliation is paused (see Pause)';
  if (report.cluster?.state === 'missing')
    return `Waiting: Cluster ${report.cluster.name} does not exist; the controller waits for it`;
  if (ready?.status === 'True' && report.claim.address !== undefined) {
    return `Bound: ${report.claim.address} (IPAddress ${report.claim.addressName ?? '<unknown>'})`;
  }
  if (ready === undefined) return 'Waiting: the claim has no Ready condition yet (the controller has not written it)';
  return `Waiting: ${ready.reason}: ${ready.message}`;
}

/** One screen, top to bottom: verdict, conditions, pool, pause, Events, the controller's last write. */
export function whyLines(report: WhyReport, nowMs: number): string[] {
  const { pool } = report;
  const counts = pool.counts
    ? `total ${pool.counts.total}, used ${pool.counts.used}, free ${pool.counts.free}, out-of-range ${pool.counts.outOfRange}`
    : 'no counts in its status';
  const lines = [
    `IPAddressClaim ${report.claim.namespace}/${report.claim.name}`,
    verdict(report),
    '',
    'Conditions:',
    ...section(
      ['type', 'status', 'reason', 'age', 'message'],
      report.conditions.map((c) => [c.type, c.status, c.reason, ageOf(c.lastTransitionTime, nowMs), c.message]),
    ),
    '',
    `Pool: ${pool.kind}/${pool.name}${pool.namespace ? ` in ${pool.namespace}` : ''}${pool.state === 'found' ? '' : ` (${pool.state})`}`,
    ...(pool.state === 'found'
      ? [
          `  ready:     ${pool.ready ? `${pool.ready.status} (${pool.ready.reason})${pool.ready.message ? `: ${pool.ready.message}` : ''}` : 'no Ready condition'}`,
          `  paused:    ${yesNo(pool.paused)}`,
          `  exhausted: ${pool.exhausted ? 'yes' : 'no'}`,
          `  counts:    ${counts}`,
        ]
      : []),
    '',
    'Pause:',
    `  claim:   ${yesNo(report.claimPaused)}`,
    `  pool:    ${yesNo(pool.paused)}`,
    `  cluster: ${report.cluster ? `${report.cluster.name}${report.cluster.state === 'found' ? '' : ` (${report.cluster.state})`}` : '<none named>'}`,
    '',
    'Events (newest last):',
    ...section(
      ['type', 'reason', 'age', 'from', 'note'],
      report.events.map((e) => [
        e.type,
        e.reason,
        `${ageOf(e.time, nowMs)}${e.count > 1 ? ` (x${e.count})` : ''}`,
        e.from,
        e.note,
      ]),
    ),
    '',
    'Controller:',
    `  last write: ${report.lastWrite ? `${report.lastWrite.manager} ${report.lastWrite.operation}${report.lastWrite.subresource ? ` ${report.lastWrite.subresource}` : ''}, ${ageOf(report.lastWrite.time, nowMs)} ago` : '<none recorded>'}`,
    `  last event: ${lastEvent(report, nowMs)}`,
  ];
  return lines;
}

function lastEvent(report: WhyReport, nowMs: number): string {
  const last = report.events.at(-1);
  return last ? `${last.reason}, ${ageOf(last.time, nowMs)} ago: ${last.note}` : '<none>';
}
