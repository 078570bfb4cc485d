import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PoolStatusBudget } from '../src/pool/status-budget.js';

describe('PoolStatusBudget', () => {
  it('lets one pool write whenever a slot is free, and gives pools asking at once one slot each', () => {
    const budget = new PoolStatusBudget(2);
    expect(budget.take('a', 0)).toBe(0);
    expect(budget.take('b', 100)).toBe(400);
    expect(budget.take('c', 100)).toBe(900);
    // Asking again before the slot keeps the slot; at the slot, the write goes.
    expect(budget.take('b', 300)).toBe(200);
    expect(budget.take('b', 500)).toBe(0);
    expect(budget.take('c', 1_000)).toBe(0);
    // Quiet since: the next pool writes at once.
    expect(budget.take('a', 5_000)).toBe(0);
  });

  it('frees a forgotten pool from its booking', () => {
    const budget = new PoolStatusBudget(1);
    expect(budget.take('a', 0)).toBe(0);
    expect(budget.take('b', 0)).toBe(1_000);
    budget.forget('b');
    // b asks afresh and gets the next slot after the one it gave up.
    expect(budget.take('b', 10)).toBe(1_990);
  });

  it('refuses a rate that is not a positive number, naming it', () => {
    expect(() => new PoolStatusBudget(0)).toThrow('got 0');
    expect(() => new PoolStatusBudget(Number.NaN)).toThrow('got NaN');
  });

  it('gives every write a slot of its own, slots one interval apart, and no write before its slot', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10 }),
        fc.array(fc.record({ pool: fc.integer({ min: 0, max: 30 }), after: fc.integer({ min: 0, max: 700 }) }), {
          maxLength: 300,
        }),
        (perSecond, asks) => {
          const budget = new PoolStatusBudget(perSecond);
          const intervalMs = 1_000 / perSecond;
          // The slot each write used: its own time when it went at once, else the slot it was given.
          const slots: number[] = [];
          const dueAt = new Map<number, number>();
          let now = 0;
          for (const ask of asks) {
            now += ask.after;
            const wait = budget.take(`pool-${ask.pool}`, now);
            expect(wait).toBeGreaterThanOrEqual(0);
            const due = dueAt.get(ask.pool);
            if (wait > 0) {
              // Asking again before the slot keeps the slot.
              if (due !== undefined) expect(now + wait).toBeCloseTo(due, 6);
              dueAt.set(ask.pool, now + wait);
              continue;
            }
            if (due !== undefined) expect(now).toBeGreaterThanOrEqual(due - 1e-6);
            slots.push(due ?? now);
            dueAt.delete(ask.pool);
          }
          slots.sort((a, b) => a - b);
          for (let index = 1; index < slots.length; index += 1) {
            expect((slots[index] as number) - (slots[index - 1] as number)).toBeGreaterThan(intervalMs - 1e-6);
          }
        },
      ),
    );
  });
});
