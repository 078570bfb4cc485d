import { describe, expect, it } from 'vitest';
import { verdict, type WhyReport, whyLines } from '../src/view/why.js';

const NOW = Date.parse('2026-12-04T12:00:00Z');

function report(overrides: Partial<WhyReport> = {}): WhyReport {
  return {
    claim: { namespace: 'ns', name: 'web-0', address: undefined, addressName: undefined },
    conditions: [],
    pool: {
      kind: 'TallyIPPool',
      name: 'roomy',
      namespace: 'ns',
      state: 'found',
      ready: { status: 'True', reason: 'PoolReady', message: '' },
      paused: [],
      exhausted: false,
      counts: { total: 4, used: 1, free: 3, outOfRange: 0 },
    },
    claimPaused: [],
    cluster: undefined,
    events: [],
    lastWrite: undefined,
    ...overrides,
  };
}

const ready = (status: string, reason: string, message = ''): WhyReport['conditions'][number] => ({
  type: 'Ready',
  status,
  reason,
  message,
  lastTransitionTime: '2026-12-04T11:59:00Z',
});

describe('verdict', () => {
  it('says first what stops the controller: pause, then a missing Cluster', () => {
    expect(verdict(report({ claimPaused: ['Cluster spec.paused is set'] }))).toBe(
      'Waiting: reconciliation is paused (see Pause)',
    );
    expect(verdict(report({ cluster: { name: 'c1', state: 'missing' } }))).toBe(
      'Waiting: Cluster c1 does not exist; the controller waits for it',
    );
  });

  it('names the address of a bound claim, the reason of a waiting one, and a claim not yet written', () => {
    const bound = report({
      conditions: [ready('True', 'AddressAllocated')],
      claim: { namespace: 'ns', name: 'web-0', address: '10.0.0.5', addressName: 'web-0' },
    });
    expect(verdict(bound)).toBe('Bound: 10.0.0.5 (IPAddress web-0)');
    expect(verdict(report({ conditions: [ready('False', 'PoolExhausted', 'no free address')] }))).toBe(
      'Waiting: PoolExhausted: no free address',
    );
    expect(verdict(report())).toMatch(/^Waiting: the claim has no Ready condition yet/);
  });
});

describe('whyLines', () => {
  it('puts every section on the screen, with <none> for an empty one', () => {
    const lines = whyLines(
      report({
        lastWrite: { manager: 'tally-ipam', operation: 'Update', subresource: 'status', time: '2026-12-04T11:58:00Z' },
      }),
      NOW,
    );
    expect(lines.slice(0, 5)).toEqual([
      'IPAddressClaim ns/web-0',
      expect.stringMatching(/^Waiting/),
      '',
      'Conditions:',
      '  <none>',
    ]);
    expect(lines).toContain('  counts:    total 4, used 1, free 3, out-of-range 0');
    expect(lines).toContain('  cluster: <none named>');
    expect(lines).toContain('  last write: tally-ipam Update status, 2m ago');
    expect(lines.at(-1)).toBe('  last event: <none>');
  });
});
