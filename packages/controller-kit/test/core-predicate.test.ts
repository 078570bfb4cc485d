import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  formatLabelSelector,
  type LabelSelector,
  type LabelSelectorRequirement,
  matchesLabelSelector,
} from '../src/cache/label-selector.js';
import type { KubeObject } from '../src/cache/object.js';
import {
  type AnyEvent,
  and,
  annotationChangedPredicate,
  evaluatePredicate,
  generationChangedPredicate,
  labelSelectorPredicate,
  newPredicateFuncs,
  not,
  or,
  type Predicate,
} from '../src/controller/predicate.js';

const labelMap = fc.dictionary(fc.constantFrom('app', 'tier', 'zone'), fc.constantFrom('a', 'b', 'c'), {
  maxKeys: 3,
});

const objectArbitrary = fc.record({
  generation: fc.integer({ min: 1, max: 3 }),
  labels: labelMap,
  annotations: labelMap,
});

function object(input: { generation: number; labels: Record<string, string>; annotations: Record<string, string> }) {
  return { metadata: { name: 'o', namespace: 'n', ...input } } satisfies KubeObject;
}

const eventArbitrary: fc.Arbitrary<AnyEvent> = fc.oneof(
  objectArbitrary.map((o): AnyEvent => ({ kind: 'create', event: { object: object(o) } })),
  fc
    .tuple(objectArbitrary, objectArbitrary)
    .map(([a, b]): AnyEvent => ({ kind: 'update', event: { objectOld: object(a), objectNew: object(b) } })),
  fc
    .tuple(objectArbitrary, fc.boolean())
    .map(([o, unknown]): AnyEvent => ({ kind: 'delete', event: { object: object(o), deleteStateUnknown: unknown } })),
  objectArbitrary.map((o): AnyEvent => ({ kind: 'generic', event: { object: object(o) } })),
);

const basePredicates: Predicate[] = [
  generationChangedPredicate(),
  annotationChangedPredicate(),
  labelSelectorPredicate({ matchLabels: { app: 'a' } }),
  newPredicateFuncs((o) => o.metadata.generation === 2),
  {},
];
const predicateArbitrary = fc.constantFrom(...basePredicates);

describe('predicates', () => {
  it('and/or/not follow boolean algebra on every event kind', () => {
    fc.assert(
      fc.property(fc.array(predicateArbitrary, { maxLength: 4 }), eventArbitrary, (predicates, event) => {
        const values = predicates.map((predicate) => evaluatePredicate(predicate, event));
        expect(evaluatePredicate(and(...predicates), event)).toBe(values.every(Boolean));
        expect(evaluatePredicate(or(...predicates), event)).toBe(values.some(Boolean));
        for (const [index, predicate] of predicates.entries()) {
          expect(evaluatePredicate(not(predicate), event)).toBe(!values[index]);
        }
      }),
    );
  });

  it('generationChanged passes updates only when the generation moved, and every other event', () => {
    fc.assert(
      fc.property(eventArbitrary, (event) => {
        const expected =
          event.kind !== 'update' ||
          event.event.objectOld.metadata.generation !== event.event.objectNew.metadata.generation;
        expect(evaluatePredicate(generationChangedPredicate(), event)).toBe(expected);
      }),
    );
  });

  it('annotationChanged compares annotation maps by content', () => {
    const predicate = annotationChangedPredicate();
    const a = object({ generation: 1, labels: {}, annotations: { x: 'a', y: 'b' } });
    const sameContent = object({ generation: 2, labels: { app: 'a' }, annotations: { y: 'b', x: 'a' } });
    const changed = object({ generation: 1, labels: {}, annotations: { x: 'a' } });
    expect(evaluatePredicate(predicate, { kind: 'update', event: { objectOld: a, objectNew: sameContent } })).toBe(
      false,
    );
    expect(evaluatePredicate(predicate, { kind: 'update', event: { objectOld: a, objectNew: changed } })).toBe(true);
  });
});

const requirementArbitrary: fc.Arbitrary<LabelSelectorRequirement> = fc.record({
  key: fc.constantFrom('app', 'tier', 'zone'),
  operator: fc.constantFrom('In', 'NotIn', 'Exists', 'DoesNotExist'),
  values: fc.uniqueArray(fc.constantFrom('a', 'b', 'c'), { minLength: 1, maxLength: 3 }),
});

const selectorArbitrary: fc.Arbitrary<LabelSelector> = fc.record({
  matchLabels: labelMap,
  matchExpressions: fc.array(requirementArbitrary, { maxLength: 3 }),
});

describe('label selectors', () => {
  it('match with the API server semantics (checked against a direct reading of the rules)', () => {
    fc.assert(
      fc.property(selectorArbitrary, labelMap, (selector, labels) => {
        const expected =
          Object.entries(selector.matchLabels ?? {}).every(([key, value]) => labels[key] === value) &&
          (selector.matchExpressions ?? []).every(({ key, operator, values = [] }) => {
            const value = labels[key];
            if (operator === 'In') return value !== undefined && values.includes(value);
            if (operator === 'NotIn') return value === undefined || !values.includes(value);
            if (operator === 'Exists') return value !== undefined;
            return value === undefined;
          });
        expect(matchesLabelSelector(selector, labels)).toBe(expected);
      }),
    );
  });

  it('formats to a canonical query string', () => {
    expect(
      formatLabelSelector({
        matchLabels: { tier: 'b', app: 'a' },
        matchExpressions: [
          { key: 'zone', operator: 'NotIn', values: ['c', 'a'] },
          { key: 'env', operator: 'Exists' },
          { key: 'gone', operator: 'DoesNotExist' },
          { key: 'color', operator: 'In', values: ['red'] },
        ],
      }),
    ).toBe('app=a,tier=b,color in (red),env,!gone,zone notin (a,c)');
  });
});
