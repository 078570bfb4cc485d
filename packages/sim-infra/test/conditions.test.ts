import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type ClaimProgress, ipAddressesCondition } from '../src/index.js';

describe('ipAddressesCondition', () => {
  it('is True when every claim is bound and nothing is invalid, and when no pool is asked for', () => {
    expect(
      ipAddressesCondition([
        { name: 'a', state: 'Bound' },
        { name: 'b', state: 'Bound' },
      ]),
    ).toEqual({ status: 'True', reason: 'IPAddressesAllocated', message: '2/2 IP addresses allocated' });
    expect(ipAddressesCondition([])).toMatchObject({ status: 'True', reason: 'NoIPAddressesRequested' });
  });

  it('reports the most actionable problem first', () => {
    const claims: ClaimProgress[] = [
      { name: 'bound', state: 'Bound' },
      { name: 'missing', state: 'Missing' },
      { name: 'pending', state: 'Pending' },
      {
        name: 'failed',
        state: 'Pending',
        ready: { status: 'False', reason: 'PoolExhausted', message: 'pool p has no free address' },
      },
      { name: 'taken', state: 'Conflict', message: 'IPAddressClaim taken exists but is controlled by Foo x' },
    ];
    expect(ipAddressesCondition(claims, ['bad address'])).toMatchObject({
      reason: 'IPAddressClaimConflict',
      message: 'IPAddressClaim taken exists but is controlled by Foo x',
    });
    const withoutConflict = claims.filter((claim) => claim.state !== 'Conflict');
    expect(ipAddressesCondition(withoutConflict, ['bad address'])).toMatchObject({
      reason: 'IPAddressInvalid',
      message: 'bad address',
    });
    expect(ipAddressesCondition(withoutConflict)).toEqual({
      status: 'False',
      reason: 'IPAddressClaimFailed',
      message: 'IPAddressClaim failed: PoolExhausted: pool p has no free address',
    });
    const withoutFailed = withoutConflict.filter((claim) => claim.name !== 'failed');
    expect(ipAddressesCondition(withoutFailed)).toEqual({
      status: 'False',
      reason: 'IPAddressClaimsBeingCreated',
      message: '1/3 IPAddressClaims being created: missing',
    });
    expect(ipAddressesCondition(withoutFailed.filter((claim) => claim.name !== 'missing'))).toEqual({
      status: 'False',
      reason: 'WaitingForIPAddress',
      message: '1/2 IPAddressClaims waiting for an IP address: pending',
    });
  });

  it('is True exactly when every claim is bound and no address is invalid', () => {
    const progress = fc.oneof(
      fc.constant<ClaimProgress>({ name: 'b', state: 'Bound' }),
      fc.constant<ClaimProgress>({ name: 'm', state: 'Missing' }),
      fc.constant<ClaimProgress>({ name: 'p', state: 'Pending' }),
      fc.constant<ClaimProgress>({ name: 'r', state: 'AddressMissing', addressName: 'r' }),
      fc.constant<ClaimProgress>({ name: 'c', state: 'Conflict', message: 'c' }),
    );
    fc.assert(
      fc.property(fc.array(progress, { maxLength: 8 }), fc.array(fc.string(), { maxLength: 2 }), (claims, invalid) => {
        const verdict = ipAddressesCondition(claims, invalid);
        const expected = invalid.length === 0 && claims.every((claim) => claim.state === 'Bound');
        expect(verdict.status === 'True').toBe(expected);
        expect(verdict.reason).toMatch(/^[A-Z][A-Za-z]+$/);
      }),
    );
  });
});
