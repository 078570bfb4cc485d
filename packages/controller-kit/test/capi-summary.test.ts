import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type ConditionStatus, type SummarySource, setCondition, summarizeConditions } from '../src/capi/index.js';

const NOW = new Date('2026-11-24T10:00:00Z');

function source(type: string, status: ConditionStatus, reason: string, message = ''): SummarySource {
  return { type, status, reason, message };
}

describe('summarizeConditions (the one Ready summary of every reconciler)', () => {
  it('is True with reason Ready and no message when every listed condition is True', () => {
    expect(
      summarizeConditions({
        conditions: [source('A', 'True', 'Fine', 'a is fine'), source('B', 'True', 'Fine')],
        forConditionTypes: ['A', 'B'],
        observedGeneration: 3,
      }),
    ).toEqual({ type: 'Ready', status: 'True', reason: 'Ready', message: '', observedGeneration: 3 });
  });

  it('is False with the reason of the first issue, listing every issue and unknown in the listed order', () => {
    expect(
      summarizeConditions({
        conditions: [
          source('C', 'Unknown', 'Unsure'),
          source('B', 'False', 'Broken', 'b is broken'),
          source('A', 'True', 'Fine'),
          source('D', 'False', 'AlsoBroken', 'd is broken'),
        ],
        forConditionTypes: ['A', 'C', 'B', 'D'],
        observedGeneration: 1,
      }),
    ).toEqual({
      type: 'Ready',
      status: 'False',
      reason: 'Broken',
      message: 'C: Unsure; B: b is broken; D: d is broken',
      observedGeneration: 1,
    });
  });

  it('is Unknown with reason ReadyUnknown when nothing is False but something is Unknown or missing', () => {
    expect(
      summarizeConditions({
        conditions: [source('A', 'Unknown', 'Probing'), source('B', 'True', 'Fine')],
        forConditionTypes: ['A', 'B', 'C'],
        observedGeneration: 2,
      }),
    ).toEqual({
      type: 'Ready',
      status: 'Unknown',
      reason: 'ReadyUnknown',
      message: 'A: Probing; C: not reported yet',
      observedGeneration: 2,
    });
  });

  it('reads negative-polarity types the other way round, leaves out ignored missing ones, and names its type', () => {
    const summary = summarizeConditions({
      conditions: [source('Deleting', 'True', 'Deleting', 'waiting for 2 claims'), source('A', 'True', 'Fine')],
      forConditionTypes: ['A', 'Deleting', 'Optional'],
      negativePolarityConditionTypes: ['Deleting'],
      ignoreTypesIfMissing: ['Optional'],
      type: 'Available',
      observedGeneration: 5,
    });
    expect(summary).toEqual({
      type: 'Available',
      status: 'False',
      reason: 'Deleting',
      message: 'Deleting: waiting for 2 claims',
      observedGeneration: 5,
    });
    expect(
      summarizeConditions({
        conditions: [source('Deleting', 'False', 'NotDeleting'), source('A', 'True', 'Fine')],
        forConditionTypes: ['A', 'Deleting', 'Optional'],
        negativePolarityConditionTypes: ['Deleting'],
        ignoreTypesIfMissing: ['Optional'],
        observedGeneration: 5,
      }).status,
    ).toBe('True');
  });

  it('reads only the listed types and counts a type listed twice once', () => {
    expect(
      summarizeConditions({
        conditions: [source('Other', 'False', 'Unrelated'), source('A', 'False', 'Broken', 'a')],
        forConditionTypes: ['A', 'A'],
        observedGeneration: 1,
      }),
    ).toMatchObject({ status: 'False', reason: 'Broken', message: 'A: a' });
    expect(summarizeConditions({ conditions: undefined, forConditionTypes: [], observedGeneration: 1 }).status).toBe(
      'True',
    );
  });

  const statuses = fc.constantFrom<ConditionStatus>('True', 'False', 'Unknown');
  const types = ['A', 'B', 'C', 'D'];
  const sources = fc.subarray(types).chain((present) =>
    fc.tuple(
      ...present.map((type) =>
        fc.record({
          type: fc.constant(type),
          status: statuses,
          reason: fc.constantFrom('Fine', 'Broken', 'Unsure'),
          message: fc.constantFrom('', 'something happened'),
        }),
      ),
    ),
  );
  const listed = fc.uniqueArray(fc.constantFrom(...types), { minLength: 1 });
  const negative = fc.subarray(types);

  it('property: the status follows the worst listed condition, read with its polarity, in a condition the API server accepts', () => {
    fc.assert(
      fc.property(sources, listed, negative, (conditions, forConditionTypes, negativePolarity) => {
        const summary = summarizeConditions({
          conditions,
          forConditionTypes,
          negativePolarityConditionTypes: negativePolarity,
          observedGeneration: 1,
        });
        const states = forConditionTypes.map((type) => {
          const status = conditions.find((condition) => condition.type === type)?.status ?? 'Unknown';
          if (status === 'Unknown') return 'Unknown';
          return (status === 'True') !== negativePolarity.includes(type) ? 'True' : 'False';
        });
        const expected = states.includes('False') ? 'False' : states.includes('Unknown') ? 'Unknown' : 'True';
        expect(summary.status).toBe(expected);
        expect(summary.message === '').toBe(expected === 'True');
        expect(() => setCondition(undefined, summary, NOW)).not.toThrow();
      }),
    );
  });

  it('property: the message names exactly the listed types that are not in their normal state, in listed order', () => {
    fc.assert(
      fc.property(sources, listed, (conditions, forConditionTypes) => {
        const summary = summarizeConditions({ conditions, forConditionTypes, observedGeneration: 1 });
        const notTrue = forConditionTypes.filter(
          (type) => conditions.find((condition) => condition.type === type)?.status !== 'True',
        );
        const named = (summary.message ?? '').split('; ').filter((part) => part !== '');
        expect(named.map((part) => part.slice(0, part.indexOf(':')))).toEqual(notTrue);
      }),
    );
  });
});
