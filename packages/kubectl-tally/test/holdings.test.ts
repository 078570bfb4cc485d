import { describe, expect, it } from 'vitest';
import { type HeldAddress, type HeldEntry, joinHoldings } from '../src/view/holdings.js';
import { parseTarget, type Target } from '../src/view/target.js';

function target(text: string): Target {
  const parsed = parseTarget(text);
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.target;
}

function entry(address: string, namespace: string, prefix?: number): HeldEntry {
  return {
    ledger: 'l',
    key: `k-${address}`,
    address,
    prefix,
    pool: { apiGroup: 'g', kind: 'TallyIPPool', name: 'p' },
    claim: { apiGroup: 'g', kind: 'IPAddressClaim', namespace, name: `c-${address}`, uid: 'u' },
    heldSince: '2026-12-04T00:00:00Z',
    releasedAt: undefined,
  };
}

function ipAddress(address: string, namespace: string, prefix = 24): HeldAddress {
  return {
    apiGroup: 'g',
    namespace,
    name: `ip-${address}`,
    address,
    prefix,
    claimName: `c-${address}`,
    pool: { kind: 'TallyIPPool', name: 'p' },
    createdAt: undefined,
  };
}

describe('joinHoldings', () => {
  it('joins an entry and the IPAddress of its address in its namespace, keeps either alone, in address order', () => {
    const held = joinHoldings(
      target('10.0.0.0/24'),
      [entry('10.0.0.10', 'a'), entry('10.0.0.9', 'a'), entry('10.0.1.1', 'a')],
      [ipAddress('10.0.0.10', 'a'), ipAddress('10.0.0.10', 'b'), ipAddress('10.0.0.2', 'a')],
    );
    expect(held.map((h) => [h.address, h.namespace, h.entry !== undefined, h.ipAddress !== undefined])).toEqual([
      ['10.0.0.2', 'a', false, true],
      ['10.0.0.9', 'a', true, false],
      ['10.0.0.10', 'a', true, true],
      ['10.0.0.10', 'b', false, true],
    ]);
  });

  it('joins a prefix allocation to its IPAddress by network and length', () => {
    const held = joinHoldings(target('10.8.0.0/16'), [entry('10.8.4.0', 'a', 24)], [ipAddress('10.8.4.0', 'a', 24)]);
    expect(held).toHaveLength(1);
    expect(held[0]?.prefix).toBe(24);
    expect(held[0]?.ipAddress?.name).toBe('ip-10.8.4.0');
  });
});
