import { fileURLToPath } from 'node:url';
import { benchDate, describeMachine, writeBenchTable } from '@tally-ipam/testenv';
import { CONTENDERS, type Contender } from './contenders.js';

/**
 * The benchmark's current figures in this app's README (`<!-- bench:claims:start -->` … `:end -->`): one row per
 * scenario, the medians over the rounds of each contender, Tally's ratios and its writes per claim, and when and on
 * what machine the row was measured. A run replaces the rows of the scenarios it ran and keeps the others.
 */

export const README_PATH: string = fileURLToPath(new URL('../README.md', import.meta.url));

const TARGETS =
  'burst ≥ 0.95× `contract-minimum`; full-pool ≥ 5× `reference`; steady 100/s p99 ≤ 100 ms; at most 0.1 writes per ' +
  "claim beyond the contract's three (4 with the claim's create); memory at rest ≤ 0.50× `reference`; start → " +
  'synced ≤ 1.00× `reference`';

export const HEADER: readonly string[] = [
  'scenario',
  ...CONTENDERS.map((contender) => `\`${contender}\``),
  'tally / contract-minimum',
  'tally / reference',
  'Tally writes per claim',
  'measured',
];

export interface ScenarioRow {
  /** `burst, 2000 claims (claims/s)`: what the row measures and its unit. */
  readonly scenario: string;
  readonly medians: ReadonlyMap<Contender, number>;
  readonly tallyWritesPerClaim?: number | undefined;
  readonly decimals?: number | undefined;
}

function ratio(row: ScenarioRow, other: Contender): string {
  const tally = row.medians.get('tally');
  const them = row.medians.get(other);
  if (tally === undefined || them === undefined || tally === 0 || them === 0) return '—';
  return `${(tally / them).toFixed(2)}×`;
}

/** The rows as table cells, each with this run's date and machine. */
export function tableRows(rows: readonly ScenarioRow[], rounds: number, now: Date = new Date()): string[][] {
  const measured = `${benchDate(now)}, ${rounds} round${rounds === 1 ? '' : 's'}; ${describeMachine()}`;
  return rows.map((row) => [
    row.scenario,
    ...CONTENDERS.map((contender) => {
      const value = row.medians.get(contender);
      return value === undefined ? '—' : value.toFixed(row.decimals ?? 1);
    }),
    ratio(row, 'contract-minimum'),
    ratio(row, 'reference'),
    row.tallyWritesPerClaim === undefined ? '—' : row.tallyWritesPerClaim.toFixed(2),
    measured,
  ]);
}

/** Merges the rows into the README's table. */
export function writeReadmeTable(rows: readonly ScenarioRow[], rounds: number): void {
  writeBenchTable(README_PATH, {
    name: 'claims',
    caption:
      'Medians over the rounds (`pnpm --filter @tally-ipam/ipam-controller bench -- --rounds=2 --readme=on`); a ratio ' +
      `is Tally's figure over the other's, in the row's unit. Targets: ${TARGETS}.`,
    header: HEADER,
    rows: tableRows(rows, rounds),
  });
}
