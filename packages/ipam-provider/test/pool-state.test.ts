import { AllocationError } from '@tally-ipam/allocator';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type AllocationUnit, buildPoolAllocation, PoolState } from '../src/index.js';

function ipPool(spec: Record<string, unknown>): unknown {
  return {
    apiVersion: 'ipam.cluster.x-k8s.io/v1alpha1',
    kind: 'TallyIPPool',
    metadata: { name: 'pool', namespace: 'ns' },
    spec,
  };
}

function stateOf(spec: Record<string, unknown>, clock: () => number = () => 0): PoolState {
  const built = buildPoolAllocation('TallyIPPool', ipPool(spec), clock);
  if (!built.ok) throw new Error(built.message);
  const state = new PoolState({ kind: 'TallyIPPool', name: 'pool', namespace: 'ns' }, 'uid', 1, built.allocation);
  state.holdReservations();
  return state;
}

describe('pool state bookkeeping', () => {
  it('never hands out an address twice and keeps total = used + free through any allocate/release sequence', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.constant('allocate' as const), fc.nat({ max: 40 })), { maxLength: 120 }),
        (steps) => {
          const state = stateOf({ addresses: ['10.0.0.1-10.0.0.20'], prefix: 24, allocationStrategy: 'Random' });
          const held = new Map<string, AllocationUnit>();
          for (const step of steps) {
            if (step === 'allocate') {
              try {
                const unit = state.allocation.allocate();
                expect(held.has(unit.address)).toBe(false);
                state.assume(unit, `claim-${held.size}`);
                held.set(unit.address, unit);
              } catch (error) {
                expect(error).toBeInstanceOf(AllocationError);
                expect(held.size).toBe(20);
              }
            } else {
              const victim = [...held.values()][step % Math.max(held.size, 1)];
              if (victim) {
                expect(state.release(victim, 0)).toBe(true);
                state.forgetAssumed(victim.entryKey);
                held.delete(victim.address);
              }
            }
            const counts = state.counts();
            expect(counts.used).toBe(BigInt(held.size));
            expect(counts.total).toBe(20n);
            expect(counts.free + counts.used).toBe(counts.total);
          }
        },
      ),
    );
  });

  it('holds reservations back from the strategy and never frees them on release', () => {
    const state = stateOf({
      addresses: ['10.0.0.1-10.0.0.3'],
      prefix: 24,
      reservations: [{ claimName: 'cp-0', address: '10.0.0.1' }],
    });
    expect(state.isReserved('ip4-10.0.0.1')).toBe(true);
    const handedOut = [state.allocation.allocate().address, state.allocation.allocate().address];
    expect(handedOut).toEqual(['10.0.0.2', '10.0.0.3']);
    expect(() => state.allocation.allocate()).toThrow(AllocationError);
    const reserved = state.allocation.unitOf('10.0.0.1', 0) as AllocationUnit;
    expect(state.release(reserved, 0)).toBe(false);
    expect(state.allocation.isAllocated(reserved)).toBe(true);
  });

  it('counts an address another pool holdings as neither used by this pool nor free', () => {
    const state = stateOf({ addresses: ['10.0.0.1-10.0.0.4'], prefix: 24 });
    const unit = state.allocation.unitOf('10.0.0.1', 0) as AllocationUnit;
    state.markForeign(unit);
    expect(state.counts()).toMatchObject({ total: 4n, used: 0n, free: 3n });
    expect(state.allocation.allocate().address).toBe('10.0.0.2');
    expect(state.releaseForeign(unit, 0)).toBe(true);
    expect(state.counts()).toMatchObject({ used: 1n, free: 3n });
  });

  it('keeps a released address out of reach for the grace period by the injected clock', () => {
    let now = 1_000_000;
    const state = stateOf(
      { addresses: ['10.0.0.1-10.0.0.2'], prefix: 24, addressReuseGracePeriodSeconds: 30 },
      () => now,
    );
    const first = state.allocation.allocate();
    state.allocation.allocate();
    state.release(first, now);
    expect(() => state.allocation.allocate()).toThrow(/grace period/);
    now += 30_000;
    expect(state.allocation.allocate().address).toBe(first.address);
  });

  it('reports an unusable spec with the field and the value', () => {
    const built = buildPoolAllocation(
      'TallyIPPool',
      ipPool({ addresses: ['10.0.0.1-10.0.0.3'], prefix: 24, reservations: [{ claimName: 'x', address: '10.0.0.9' }] }),
      () => 0,
    );
    expect(built.ok).toBe(false);
    expect(built.ok ? '' : built.message).toMatch(/spec\.reservations\[0\]: address 10\.0\.0\.9 for claim x/);
  });
});
