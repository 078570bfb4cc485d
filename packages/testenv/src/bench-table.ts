import { readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, platform } from 'node:os';

/**
 * A benchmark's current figures as one Markdown table in a README, between
 * `<!-- bench:NAME:start -->` and `<!-- bench:NAME:end -->`, written by the benchmark itself. A README keeps only the
 * current figures; their history is in git. Rows are keyed by their first cell, so a run of some scenarios replaces
 * their rows and leaves the others' (each row says when and where it was measured).
 */

export interface BenchTable {
  /** The marker's name: lower-case letters, digits and dashes (`claims`, `ledger-write-cost`). */
  readonly name: string;
  /** The line above the table: what was measured, the command that measures it, the targets. */
  readonly caption: string;
  readonly header: readonly string[];
  /** Rows of cells, keyed by their first cell. */
  readonly rows: readonly (readonly string[])[];
}

const NAME = /^[a-z0-9][a-z0-9-]*$/;

function markers(name: string): { start: string; end: string } {
  if (!NAME.test(name)) throw new Error(`bench table name ${JSON.stringify(name)}: use lower-case letters, digits, -`);
  return { start: `<!-- bench:${name}:start -->`, end: `<!-- bench:${name}:end -->` };
}

/** `2 cores (AMD EPYC 7B13), linux, Node v20.20.2, load 1.2`: the machine a row was measured on, for its cell. */
export function describeMachine(): string {
  const model = cpus()[0]?.model.trim().replace(/\s+/g, ' ') ?? 'unknown CPU';
  const load = loadavg()[0] ?? 0;
  return `${availableParallelism()} cores (${model}), ${platform()}, Node ${process.version}, load ${load.toFixed(1)}`;
}

/** `2026-12-02`: the day a row was measured, in UTC. */
export function benchDate(now: Date = new Date()): string {
  return now.toISOString().slice(0, 10);
}

function escapeCell(cell: string): string {
  return cell.replaceAll('|', '\\|').replaceAll('\n', ' ');
}

function tableRow(cells: readonly string[]): string {
  return `| ${cells.map(escapeCell).join(' | ')} |`;
}

/** Splits a table row into cells, honouring `\|`. */
function cellsOf(line: string): string[] {
  const body = line.trim().replace(/^\|/, '').replace(/\|$/, '');
  return body.split(/(?<!\\)\|/).map((cell) => cell.trim().replaceAll('\\|', '|'));
}

/** The table between a README's markers, or undefined when the README has none for this name. */
export function readBenchTable(text: string, name: string): BenchTable | undefined {
  const { start, end } = markers(name);
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from === -1 || to === -1 || to < from) return undefined;
  const lines = text
    .slice(from + start.length, to)
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  const tableLines = lines.filter((line) => line.startsWith('|'));
  const caption = lines.filter((line) => !line.startsWith('|')).join(' ');
  const [headerLine, , ...rowLines] = tableLines;
  if (headerLine === undefined) return { name, caption, header: [], rows: [] };
  return { name, caption, header: cellsOf(headerLine), rows: rowLines.map(cellsOf) };
}

/** The table as it goes between its markers. */
export function renderBenchTable(table: BenchTable): string {
  for (const row of table.rows) {
    if (row.length !== table.header.length) {
      throw new Error(
        `bench table ${table.name}: row ${JSON.stringify(row[0])} has ${row.length} cells, the header ${table.header.length}`,
      );
    }
  }
  const { start, end } = markers(table.name);
  return [
    start,
    table.caption,
    '',
    tableRow(table.header),
    tableRow(table.header.map(() => '---')),
    ...table.rows.map(tableRow),
    end,
  ].join('\n');
}

/**
 * The README's text with this table's rows merged in: a row whose first cell the README's table has replaces that
 * row, a new one is appended; the caption and header are the new ones. Throws when the README has no markers for the
 * table (a bench never adds a section on its own: a person places it).
 */
export function mergeBenchTable(text: string, table: BenchTable): string {
  const { start, end } = markers(table.name);
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from === -1 || to === -1 || to < from) {
    throw new Error(`no ${start} … ${end} section: add one where the figures belong`);
  }
  const previous = readBenchTable(text, table.name);
  const sameHeader = previous !== undefined && previous.header.join('|') === table.header.join('|');
  const fresh = new Map(table.rows.map((row) => [row[0] ?? '', row]));
  // Rows of another header are of an older table: the new run's rows replace them all.
  const kept = sameHeader ? previous.rows.map((row) => fresh.get(row[0] ?? '') ?? row) : [];
  const keptKeys = new Set(kept.map((row) => row[0] ?? ''));
  const rows = [...kept, ...table.rows.filter((row) => !keptKeys.has(row[0] ?? ''))];
  return `${text.slice(0, from)}${renderBenchTable({ ...table, rows })}${text.slice(to + end.length)}`;
}

/** Merges the table into the README at `path` (see {@link mergeBenchTable}) and writes it back. */
export function writeBenchTable(path: string, table: BenchTable): void {
  writeFileSync(path, mergeBenchTable(readFileSync(path, 'utf8'), table));
}
