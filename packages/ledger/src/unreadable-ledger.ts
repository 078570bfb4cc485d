import { clipText } from '@tally-ipam/api-types';
import { KubeApiError } from '@tally-ipam/controller-kit';
import { LEDGER_RESOURCE } from './resource.js';

/** How much of the reader's complaint a claim's condition repeats (the first issues name their fields). */
const MAX_COMPLAINT_LENGTH = 400;

/**
 * When `error` is a TallyAddressLedger read back from the API server that does not parse (a key twice, a malformed
 * entry: written by hand, since the API server checks only an entry's required fields), what a claim's condition says
 * about it; otherwise undefined. Such a ledger is never written over and nothing is allocated from its block.
 */
export function unreadableLedgerMessage(error: unknown): string | undefined {
  if (!(error instanceof KubeApiError) || error.reason !== 'InvalidResponse') return undefined;
  // The client names the resource of a request by its kind, or by its plural.
  const resource = error.target?.resource;
  if (resource !== LEDGER_RESOURCE.kind && resource !== LEDGER_RESOURCE.plural) return undefined;
  return (
    `TallyAddressLedger ${error.target?.name ?? '(unnamed)'} cannot be read, so nothing is allocated from its block ` +
    `or written over it until it is corrected: ${clipText(error.serverMessage, MAX_COMPLAINT_LENGTH)}`
  );
}
