import * as z from 'zod';
import { inspectIP } from './addresses.js';

/**
 * What `kubectl get taddrledger` shows of a ledger: how many entries, the lowest and highest, and the pools. A printer
 * column shows a jsonPath, and JSONPath can neither count a list nor order addresses numerically (entries are sorted
 * by key text, where ip4-10.0.0.10 comes before ip4-10.0.0.9), so the writer carries the answer in `status`.
 *
 * Why `status` is safe here: the ledger has no status subresource, so the summary goes in the same compare-and-swap
 * write as the entries it summarises and can never be out of step with them; it costs no extra request. Nothing
 * decides on it: every reader works from `spec.entries`, and a summary edited by hand misleads a person only.
 */

/** Pools named in a ledger summary; a ledger holds at most 256 entries, so at most 256 pools. */
const MAX_SUMMARY_POOLS = 256;

export const TallyAddressLedgerStatus = z
  .object({
    entries: z
      .int()
      .min(0)
      .max(256)
      .describe('How many entries spec.entries holds.')
      .meta({ format: 'int32' })
      .optional(),
    first: z.string().max(43).describe('The lowest address (or prefix, as a CIDR) of the entries.').optional(),
    last: z.string().max(43).describe('The highest address (or prefix, as a CIDR) of the entries.').optional(),
    pools: z
      .array(z.string().max(380))
      .max(MAX_SUMMARY_POOLS)
      .describe('The pools the entries came from, as namespace/name (name alone for a global pool), sorted.')
      .optional(),
  })
  .describe(
    'A summary of spec.entries for kubectl get, written with the entries in the same write; nothing decides on it.',
  );
export type TallyAddressLedgerStatus = z.infer<typeof TallyAddressLedgerStatus>;

/** What the summary reads of an entry (`AddressLedgerEntry`, named by shape: that module imports this one). */
export interface SummarisedEntry {
  readonly address: string;
  readonly prefix?: number | undefined;
  readonly poolRef: { readonly name: string; readonly namespace?: string | undefined };
}

function entryText(entry: SummarisedEntry): string {
  return entry.prefix === undefined ? entry.address : `${entry.address}/${entry.prefix}`;
}

function entryOrder(entry: SummarisedEntry): bigint {
  const ip = inspectIP(entry.address);
  return ip.ok ? ip.value.value : -1n;
}

/** The summary of a ledger's entries (entries of one block share a family, so ordering by value is numeric order). */
export function ledgerStatus(entries: readonly SummarisedEntry[]): TallyAddressLedgerStatus {
  const ordered = [...entries].sort((a, b) => {
    const difference = entryOrder(a) - entryOrder(b);
    if (difference !== 0n) return difference < 0n ? -1 : 1;
    return (a.prefix ?? 0) - (b.prefix ?? 0);
  });
  const pools = new Set(
    entries.map((entry) =>
      entry.poolRef.namespace === undefined ? entry.poolRef.name : `${entry.poolRef.namespace}/${entry.poolRef.name}`,
    ),
  );
  const first = ordered[0];
  const last = ordered.at(-1);
  return {
    entries: entries.length,
    ...(first === undefined ? {} : { first: entryText(first) }),
    ...(last === undefined ? {} : { last: entryText(last) }),
    pools: [...pools].sort(),
  };
}
