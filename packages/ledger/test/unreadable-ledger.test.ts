import { KubeApiError } from '@tally-ipam/controller-kit';
import { describe, expect, it } from 'vitest';
import { unreadableLedgerMessage } from '../src/index.js';

const invalid = (resource: string, message: string): KubeApiError =>
  new KubeApiError(200, { reason: 'InvalidResponse', message }, { verb: 'get', resource, name: 'ip4-10.0.0.0.24' });

describe('unreadableLedgerMessage', () => {
  it('names the ledger and repeats the reader’s complaint for a ledger that does not parse', () => {
    const message = unreadableLedgerMessage(
      invalid('TallyAddressLedger', '✖ Invalid ISO datetime → at spec.entries[3].heldSince'),
    );
    expect(message).toBe(
      'TallyAddressLedger ip4-10.0.0.0.24 cannot be read, so nothing is allocated from its block or written over it ' +
        'until it is corrected: ✖ Invalid ISO datetime → at spec.entries[3].heldSince',
    );
    expect(unreadableLedgerMessage(invalid('tallyaddressledgers', 'x'))).toContain('ip4-10.0.0.0.24 cannot be read');
  });

  it('cuts a long complaint', () => {
    const message = unreadableLedgerMessage(invalid('TallyAddressLedger', 'y'.repeat(5_000))) ?? '';
    expect(message.length).toBeLessThan(600);
    expect(message.endsWith('…')).toBe(true);
  });

  it('is undefined for anything else: another kind that does not parse, another failure, not an API error', () => {
    expect(unreadableLedgerMessage(invalid('IPAddress', 'x'))).toBeUndefined();
    expect(
      unreadableLedgerMessage(
        new KubeApiError(409, { reason: 'Conflict', message: 'x' }, { verb: 'update', resource: 'TallyAddressLedger' }),
      ),
    ).toBeUndefined();
    expect(unreadableLedgerMessage(new Error('TallyAddressLedger'))).toBeUndefined();
  });
});
