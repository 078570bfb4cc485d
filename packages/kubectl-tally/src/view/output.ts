import { stringify } from 'yaml';
import type { OutputFormat } from '../args.js';
import { renderTable } from './table.js';

/** A command's result: structured items for -o json|yaml, and the table (and its wide form) for people. */
export interface Listing {
  /** The `kind` of the json/yaml document, e.g. `PoolList`. */
  readonly kind: string;
  readonly items: readonly Record<string, unknown>[];
  readonly headers: readonly string[];
  readonly rows: readonly (readonly string[])[];
  readonly wideHeaders: readonly string[];
  readonly wideRows: readonly (readonly string[])[];
  /** Printed to stderr instead of an empty table, as kubectl's "No resources found". */
  readonly empty: string;
}

/** The document -o json and -o yaml print: a list with the plugin's own kind. */
export function documentOf(kind: string, items: readonly Record<string, unknown>[]): Record<string, unknown> {
  return { apiVersion: 'kubectl-tally/v1', kind, items };
}

/** What to print: stdout text, and a note for stderr (an empty table's). */
export function renderListing(listing: Listing, format: OutputFormat): { stdout: string; stderr: string } {
  if (format === 'json')
    return { stdout: `${JSON.stringify(documentOf(listing.kind, listing.items), null, 2)}\n`, stderr: '' };
  if (format === 'yaml') return { stdout: stringify(documentOf(listing.kind, listing.items)), stderr: '' };
  if (listing.rows.length === 0) return { stdout: '', stderr: `${listing.empty}\n` };
  const wide = format === 'wide';
  const lines = renderTable(wide ? listing.wideHeaders : listing.headers, wide ? listing.wideRows : listing.rows);
  return { stdout: `${lines.join('\n')}\n`, stderr: '' };
}

/** A single document (`why`): json or yaml of `value`, else the text made for people. */
export function renderDocument(value: Record<string, unknown>, text: readonly string[], format: OutputFormat): string {
  if (format === 'json') return `${JSON.stringify(value, null, 2)}\n`;
  if (format === 'yaml') return stringify(value);
  return `${text.join('\n')}\n`;
}
