import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type Condition,
  type ConditionInput,
  formatConditionTime,
  getCondition,
  InvalidConditionError,
  isConditionFalse,
  isConditionTrue,
  removeCondition,
  setCondition,
} from '../src/capi/conditions.js';

const conditionType = fc.constantFrom('Ready', 'Paused', 'PoolReady', 'example.com/Synced', 'Allocated');
const status = fc.constantFrom('True' as const, 'False' as const, 'Unknown' as const);
const reason = fc.stringMatching(/^[A-Za-z][A-Za-z0-9_]{0,20}$/);
const message = fc.string({ maxLength: 40 });
const generation = fc.nat({ max: 1_000 });
// Whole seconds: conditions carry second precision.
const time = fc.integer({ min: 1_600_000_000, max: 2_000_000_000 }).map((seconds) => new Date(seconds * 1000));

const input: fc.Arbitrary<ConditionInput> = fc.record({
  type: conditionType,
  status,
  reason,
  message,
  observedGeneration: generation,
});

/** Any list of valid conditions with distinct types, built through setCondition itself. */
const conditions: fc.Arbitrary<Condition[]> = fc
  .array(fc.tuple(input, time), { maxLength: 6 })
  .map((steps) => steps.reduce<Condition[]>((list, [step, at]) => setCondition(list, step, at), []));

describe('setCondition', () => {
  it('stores exactly the given type, status, reason, message and observedGeneration', () => {
    fc.assert(
      fc.property(conditions, input, time, (before, next, now) => {
        const after = setCondition(before, next, now);
        const stored = getCondition(after, next.type);
        expect(stored).toMatchObject({
          type: next.type,
          status: next.status,
          reason: next.reason,
          message: next.message,
          observedGeneration: next.observedGeneration,
        });
        expect(isConditionTrue(after, next.type)).toBe(next.status === 'True');
        expect(isConditionFalse(after, next.type)).toBe(next.status === 'False');
      }),
    );
  });

  it('changes lastTransitionTime exactly when the status changes or the condition is new', () => {
    fc.assert(
      fc.property(conditions, input, time, (before, next, now) => {
        const previous = getCondition(before, next.type);
        const stored = getCondition(setCondition(before, next, now), next.type);
        if (previous && previous.status === next.status) {
          expect(stored?.lastTransitionTime).toBe(previous.lastTransitionTime);
        } else {
          expect(stored?.lastTransitionTime).toBe(formatConditionTime(now));
        }
      }),
    );
  });

  it('keeps one condition per type, leaves the others untouched and keeps their order', () => {
    fc.assert(
      fc.property(conditions, input, time, (before, next, now) => {
        const after = setCondition(before, next, now);
        const types = after.map((condition) => condition.type);
        expect(new Set(types).size).toBe(types.length);
        expect(after.filter((condition) => condition.type !== next.type)).toEqual(
          before.filter((condition) => condition.type !== next.type),
        );
        const existed = before.some((condition) => condition.type === next.type);
        expect(after.length).toBe(before.length + (existed ? 0 : 1));
        if (existed) expect(types).toEqual(before.map((condition) => condition.type));
      }),
    );
  });

  it('is idempotent: setting the same input again, later, changes nothing', () => {
    fc.assert(
      fc.property(conditions, input, time, time, (before, next, first, second) => {
        const once = setCondition(before, next, first);
        expect(setCondition(once, next, second)).toEqual(once);
      }),
    );
  });

  it('does not modify its input array', () => {
    fc.assert(
      fc.property(conditions, input, time, (before, next, now) => {
        const snapshot = structuredClone(before);
        setCondition(before, next, now);
        expect(before).toEqual(snapshot);
      }),
    );
  });

  it('formats lastTransitionTime as RFC 3339 with second precision', () => {
    const [condition] = setCondition(
      [],
      { type: 'Ready', status: 'True', reason: 'Done', observedGeneration: 3 },
      new Date('2026-03-04T05:06:07.891Z'),
    );
    expect(condition?.lastTransitionTime).toBe('2026-03-04T05:06:07Z');
    expect(condition?.message).toBe('');
  });

  it('rejects an empty reason with an error naming the condition', () => {
    fc.assert(
      fc.property(conditions, conditionType, status, time, (before, type, conditionStatus, now) => {
        expect(() =>
          setCondition(before, { type, status: conditionStatus, reason: '', observedGeneration: 1 }, now),
        ).toThrow(
          new InvalidConditionError(
            `condition ${JSON.stringify(type)}: reason must not be empty (use an UpperCamelCase reason such as "Ready")`,
          ),
        );
      }),
    );
  });

  it('rejects reasons, types, statuses and generations the API server would refuse', () => {
    const now = new Date();
    const base: ConditionInput = { type: 'Ready', status: 'True', reason: 'Ok', observedGeneration: 1 };
    expect(() => setCondition([], { ...base, reason: 'has space' }, now)).toThrow(/reason "has space" must start/);
    expect(() => setCondition([], { ...base, reason: '9Lives' }, now)).toThrow(InvalidConditionError);
    expect(() => setCondition([], { ...base, type: 'not valid!' }, now)).toThrow(/type must be a qualified name/);
    expect(() => setCondition([], { ...base, status: 'Yes' as unknown as 'True' }, now)).toThrow(
      /status must be True, False or Unknown/,
    );
    expect(() => setCondition([], { ...base, observedGeneration: -1 }, now)).toThrow(/observedGeneration/);
    expect(() => setCondition([], { ...base, message: 'x'.repeat(32769) }, now)).toThrow(/message is longer/);
  });
});

describe('removeCondition', () => {
  it('removes only the named type', () => {
    fc.assert(
      fc.property(conditions, conditionType, (before, type) => {
        const after = removeCondition(before, type);
        expect(getCondition(after, type)).toBeUndefined();
        expect(after).toEqual(before.filter((condition) => condition.type !== type));
      }),
    );
  });
});
