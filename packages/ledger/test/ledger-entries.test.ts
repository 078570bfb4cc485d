import { formatIP, ipFromValue } from '@tally-ipam/allocator';
import { type AddressLedgerEntry, MAX_LEDGER_ENTRIES } from '@tally-ipam/api-types';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ADDRESS_BLOCK_BITS,
  addressEntryKey,
  applyOperations,
  type LedgerOperation,
  ledgerNameOf,
  ledgerNameOfEntryKey,
  prefixEntryKey,
  type WantedEntry,
} from '../src/index.js';

/** Addresses (or prefixes of one length) per ledger. */
const BLOCK = 2 ** ADDRESS_BLOCK_BITS;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

const ipv4 = fc.bigInt({ min: 0n, max: 2n ** 32n - 1n }).map((value) => ipFromValue(4, value));
const ipv6 = fc
  .oneof(
    fc.bigInt({ min: 0n, max: 2n ** 128n - 1n }),
    fc.bigInt({ min: 0n, max: 2n ** 16n - 1n }).map((high) => high << 112n),
    fc.bigInt({ min: 0n, max: 255n }),
  )
  .map((value) => ipFromValue(6, value));

describe('ledger names', () => {
  it('name the aligned block of an address: valid names, one per block of 2^ADDRESS_BLOCK_BITS, never shared across blocks', () => {
    fc.assert(
      fc.property(fc.oneof(ipv4, ipv6), fc.integer({ min: 0, max: BLOCK - 1 }), (ip, offset) => {
        const name = ledgerNameOf({ address: formatIP(ip), prefix: 0, isPrefix: false });
        expect(name.length).toBeLessThanOrEqual(253);
        expect(name).toMatch(DNS1123_SUBDOMAIN);
        const blockStart = ip.value - (ip.value % BigInt(BLOCK));
        const sibling = ipFromValue(ip.family, blockStart + BigInt(offset));
        expect(ledgerNameOf({ address: formatIP(sibling), prefix: 0, isPrefix: false })).toBe(name);
        const next = blockStart + BigInt(BLOCK);
        if (next <= (ip.family === 4 ? 2n ** 32n - 1n : 2n ** 128n - 1n)) {
          expect(
            ledgerNameOf({ address: formatIP(ipFromValue(ip.family, next)), prefix: 0, isPrefix: false }),
          ).not.toBe(name);
        }
      }),
    );
  });

  it('put at most 2^ADDRESS_BLOCK_BITS prefixes of one length in one ledger, and never a prefix with an address', () => {
    fc.assert(
      fc.property(ipv4, fc.integer({ min: 0, max: 32 }), (ip, length) => {
        const hostBits = BigInt(32 - length);
        const network = ipFromValue(4, (ip.value >> hostBits) << hostBits);
        const name = ledgerNameOf({ address: formatIP(network), prefix: length, isPrefix: true });
        expect(name).toMatch(DNS1123_SUBDOMAIN);
        expect(name.startsWith('net4-')).toBe(true);
        expect(name).not.toBe(ledgerNameOf({ address: formatIP(network), prefix: 0, isPrefix: false }));
        // The block's first prefix and this one share the ledger; the block spans 2^min(length, bits) prefixes.
        const blockBits = BigInt(Math.min(length, ADDRESS_BLOCK_BITS));
        const first = ipFromValue(4, (network.value >> (hostBits + blockBits)) << (hostBits + blockBits));
        expect(ledgerNameOf({ address: formatIP(first), prefix: length, isPrefix: true })).toBe(name);
        expect(2 ** Number(blockBits)).toBeLessThanOrEqual(MAX_LEDGER_ENTRIES);
      }),
    );
  });

  it('examples', () => {
    expect(ledgerNameOf({ address: '10.0.0.5', prefix: 24, isPrefix: false })).toBe('ip4-10.0.0.0.27');
    expect(ledgerNameOf({ address: 'fd00::1:2', prefix: 64, isPrefix: false })).toBe('ip6-fd00--1-0.123');
    expect(ledgerNameOf({ address: 'fd00::', prefix: 64, isPrefix: false })).toBe('ip6-fd00--0.123');
    expect(ledgerNameOf({ address: '10.0.1.0', prefix: 24, isPrefix: true })).toBe('net4-10.0.0.0.19.24');
    expect(ledgerNameOf({ address: '10.0.0.0', prefix: 4, isPrefix: true })).toBe('net4-0.0.0.0.0.4');
  });

  it('name the ledger of an entry key as of its unit, so an entry in any other ledger is recognised as misplaced', () => {
    fc.assert(
      fc.property(fc.oneof(ipv4, ipv6), fc.boolean(), fc.integer({ min: 0, max: 128 }), (ip, isPrefix, length) => {
        const bits = ip.family === 4 ? 32 : 128;
        const prefix = Math.min(length, bits);
        const hostBits = BigInt(bits - prefix);
        const network = isPrefix ? ipFromValue(ip.family, (ip.value >> hostBits) << hostBits) : ip;
        const address = formatIP(network);
        const key = isPrefix ? prefixEntryKey(address, prefix) : addressEntryKey(address);
        expect(ledgerNameOfEntryKey(key)).toBe(ledgerNameOf({ address, prefix, isPrefix }));
      }),
    );
    expect(ledgerNameOfEntryKey('ip4-10.0.0.5')).toBe('ip4-10.0.0.0.27');
    expect(ledgerNameOfEntryKey('net4-10.0.1.0.24')).toBe('net4-10.0.0.0.19.24');
    expect(ledgerNameOfEntryKey('not-a-key')).toBeUndefined();
    expect(ledgerNameOfEntryKey('ip4-255.255.255.255')).toBe('ip4-255.255.255.224.27');
    // Not canonical addresses: no ledger (as parseEntryKey refuses them).
    expect(ledgerNameOfEntryKey('ip4-256.0.0.1')).toBeUndefined();
    expect(ledgerNameOfEntryKey('ip4-010.0.0.1')).toBeUndefined();
  });
});

const POOL = { apiGroup: 'ipam.cluster.x-k8s.io', kind: 'TallyIPPool', name: 'p', namespace: 'ns' } as const;

function wanted(address: string, claim: string, uid = `uid-${claim}`): WantedEntry {
  return { key: addressEntryKey(address), address, poolRef: POOL, claimRef: { namespace: 'ns', name: claim, uid } };
}

const NOW = Date.parse('2026-01-01T00:00:00Z');

describe('ledger operations', () => {
  it('never hold one key for two claims, whatever the order of holds, releases and drops', () => {
    const address = fc.integer({ min: 1, max: 6 }).map((last) => `10.0.0.${last}`);
    const claim = fc.integer({ min: 0, max: 4 }).map((index) => `c${index}`);
    const operation: fc.Arbitrary<LedgerOperation> = fc.oneof(
      fc.record({ address, claim, grace: fc.constantFrom(0, 60_000) }).map(
        ({ address, claim, grace }): LedgerOperation => ({
          kind: 'hold',
          entry: wanted(address, claim),
          reuseGracePeriodMs: grace,
        }),
      ),
      fc.record({ address, claim, keep: fc.boolean() }).map(
        ({ address, claim, keep }): LedgerOperation => ({
          kind: 'release',
          key: addressEntryKey(address),
          claimUID: `uid-${claim}`,
          ...(keep ? { releasedAt: new Date(NOW).toISOString() } : {}),
        }),
      ),
    );
    fc.assert(
      fc.property(fc.array(fc.array(operation, { maxLength: 8 }), { maxLength: 8 }), (batches) => {
        let entries: AddressLedgerEntry[] = [];
        for (const batch of batches) {
          const applied = applyOperations(entries, batch, NOW);
          expect(new Set(applied.entries.map((entry) => entry.key)).size).toBe(applied.entries.length);
          // Every successful hold of the batch is what the ledger holds for that key at its end, unless a later
          // operation of the same batch released or took it over.
          for (const [index, result] of applied.results.entries()) {
            const op = batch[index] as LedgerOperation;
            if (op.kind !== 'hold') continue;
            const later = batch
              .slice(index + 1)
              .some((next) => next.kind !== 'hold' || next.entry.key === op.entry.key);
            const final = applied.entries.find((entry) => entry.key === op.entry.key);
            if (result.ok && !later) expect(final?.claimRef.uid).toBe(op.entry.claimRef.uid);
            if (!result.ok) expect(result.holder.claimRef.uid).not.toBe(op.entry.claimRef.uid);
          }
          entries = applied.entries;
        }
      }),
    );
  });

  it('follow the rules of the holdings: ours again, stale name taken over, grace period kept', () => {
    const held = applyOperations([], [{ kind: 'hold', entry: wanted('10.0.0.1', 'a'), reuseGracePeriodMs: 0 }], NOW);
    expect(held.changed).toBe(true);
    const entries = held.entries;
    // The same claim again (a retry, another replica): no write needed.
    const again = applyOperations(
      entries,
      [{ kind: 'hold', entry: wanted('10.0.0.1', 'a'), reuseGracePeriodMs: 0 }],
      NOW,
    );
    expect(again).toMatchObject({ changed: false, results: [{ ok: true }] });
    // Another claim: refused, the holder named.
    const other = applyOperations(
      entries,
      [{ kind: 'hold', entry: wanted('10.0.0.1', 'b'), reuseGracePeriodMs: 0 }],
      NOW,
    );
    expect(other.results[0]).toMatchObject({ ok: false, holder: { claimRef: { name: 'a' } } });
    // A re-created claim of the same name (another uid): the old entry is stale.
    const renewed = applyOperations(
      entries,
      [{ kind: 'hold', entry: wanted('10.0.0.1', 'a', 'uid-new'), reuseGracePeriodMs: 0 }],
      NOW,
    );
    expect(renewed.entries[0]?.claimRef.uid).toBe('uid-new');
    // Released with a grace period: kept until it is over.
    const released = applyOperations(
      entries,
      [
        {
          kind: 'release',
          key: addressEntryKey('10.0.0.1'),
          claimUID: 'uid-a',
          releasedAt: new Date(NOW).toISOString(),
        },
      ],
      NOW,
    ).entries;
    const early = applyOperations(
      released,
      [{ kind: 'hold', entry: wanted('10.0.0.1', 'b'), reuseGracePeriodMs: 1000 }],
      NOW + 999,
    );
    expect(early.results[0]?.ok).toBe(false);
    const late = applyOperations(
      released,
      [{ kind: 'hold', entry: wanted('10.0.0.1', 'b'), reuseGracePeriodMs: 1000 }],
      NOW + 1000,
    );
    expect(late.results[0]?.ok).toBe(true);
    // A release by another claim's uid changes nothing; a drop of an entry that changed since it was seen neither.
    expect(
      applyOperations(entries, [{ kind: 'release', key: addressEntryKey('10.0.0.1'), claimUID: 'uid-b' }], NOW).changed,
    ).toBe(false);
    const observed = entries[0] as AddressLedgerEntry;
    expect(applyOperations(renewed.entries, [{ kind: 'drop', observed }], NOW).changed).toBe(false);
    expect(applyOperations(entries, [{ kind: 'drop', observed }], NOW).entries).toEqual([]);
  });

  it('tell claims of two IPAM APIs apart even when they share a namespace and a name', () => {
    const capi = applyOperations([], [{ kind: 'hold', entry: wanted('10.0.0.1', 'a'), reuseGracePeriodMs: 0 }], NOW);
    const metal3Claim = { apiGroup: 'ipam.metal3.io', kind: 'IPClaim', namespace: 'ns', name: 'a', uid: 'uid-m' };
    const metal3 = { ...wanted('10.0.0.1', 'a'), claimRef: metal3Claim };
    // Another claim object, not a re-created one: refused, not taken over as a stale entry.
    const clash = applyOperations(capi.entries, [{ kind: 'hold', entry: metal3, reuseGracePeriodMs: 0 }], NOW);
    expect(clash).toMatchObject({ changed: false, results: [{ ok: false, holder: { claimRef: { uid: 'uid-a' } } }] });
    // A re-created Metal3 claim of the same name does take over its own API's stale entry.
    const held = applyOperations([], [{ kind: 'hold', entry: metal3, reuseGracePeriodMs: 0 }], NOW);
    const renewed = { ...metal3, claimRef: { ...metal3Claim, uid: 'uid-m2' } };
    const taken = applyOperations(held.entries, [{ kind: 'hold', entry: renewed, reuseGracePeriodMs: 0 }], NOW);
    expect(taken.entries[0]?.claimRef).toEqual(renewed.claimRef);
    // An absent group and kind mean an IPAddressClaim of ipam.cluster.x-k8s.io.
    const explicit = {
      ...wanted('10.0.0.1', 'a', 'uid-a2'),
      claimRef: {
        apiGroup: 'ipam.cluster.x-k8s.io',
        kind: 'IPAddressClaim',
        namespace: 'ns',
        name: 'a',
        uid: 'uid-a2',
      },
    };
    const retaken = applyOperations(capi.entries, [{ kind: 'hold', entry: explicit, reuseGracePeriodMs: 0 }], NOW);
    expect(retaken.entries[0]?.claimRef.uid).toBe('uid-a2');
  });
});
