import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DELETE_MACHINE_ANNOTATION,
  newestFirst,
  type ScaleDownCandidate,
  selectReplicasToDelete,
} from '../src/index.js';

const candidates: fc.Arbitrary<ScaleDownCandidate[]> = fc.uniqueArray(fc.nat(99), { maxLength: 15 }).chain((indexes) =>
  fc.tuple(
    ...indexes.map((index) =>
      fc.record<ScaleDownCandidate>({
        name: fc.constant(`m-${String(index).padStart(2, '0')}`),
        provisioned: fc.boolean(),
        outdated: fc.boolean(),
        machineAnnotations: fc.constantFrom<Record<string, string>>(
          {},
          { [DELETE_MACHINE_ANNOTATION]: '' },
          { other: 'x' },
        ),
        creationTimestamp: fc.constantFrom('2026-01-01T00:00:00Z', '2026-06-01T00:00:00Z', undefined),
      }),
    ),
  ),
);

function rank(candidate: ScaleDownCandidate): number {
  if (candidate.outdated) return 0;
  return DELETE_MACHINE_ANNOTATION in candidate.machineAnnotations ? 1 : 2;
}

describe('selectReplicasToDelete (scale-down through the owner Machine)', () => {
  it('removes exactly the provisioned excess, outdated first, then delete-machine annotated, then by preference', () => {
    fc.assert(
      fc.property(candidates, fc.nat(16), (list, desired) => {
        const selected = selectReplicasToDelete(list, desired);
        const provisioned = list.filter((candidate) => candidate.provisioned);
        expect(selected).toHaveLength(Math.max(0, provisioned.length - desired));
        expect(new Set(selected).size).toBe(selected.length);
        const byName = new Map(list.map((candidate) => [candidate.name, candidate]));
        for (const name of selected) expect(byName.get(name)?.provisioned).toBe(true);
        const chosen = selected.map((name) => byName.get(name) as ScaleDownCandidate);
        for (let index = 1; index < chosen.length; index++) {
          const previous = chosen[index - 1] as ScaleDownCandidate;
          const current = chosen[index] as ScaleDownCandidate;
          expect(
            rank(previous) < rank(current) || (rank(previous) === rank(current) && newestFirst(previous, current) < 0),
          ).toBe(true);
        }
        // Nothing left behind ranks before something selected.
        const worstSelected = chosen.at(-1);
        if (worstSelected) {
          for (const remaining of provisioned.filter((candidate) => !selected.includes(candidate.name))) {
            expect(
              rank(remaining) > rank(worstSelected) ||
                (rank(remaining) === rank(worstSelected) && newestFirst(worstSelected, remaining) < 0),
            ).toBe(true);
          }
        }
      }),
    );
  });

  it('takes the newest first by default and follows a given preference', () => {
    const list: ScaleDownCandidate[] = [
      {
        name: 'old',
        provisioned: true,
        outdated: false,
        machineAnnotations: {},
        creationTimestamp: '2026-01-01T00:00:00Z',
      },
      {
        name: 'new',
        provisioned: true,
        outdated: false,
        machineAnnotations: {},
        creationTimestamp: '2026-06-01T00:00:00Z',
      },
    ];
    expect(selectReplicasToDelete(list, 1)).toEqual(['new']);
    expect(selectReplicasToDelete(list, 1, (a, b) => a.name.localeCompare(b.name) * -1)).toEqual(['old']);
    expect(selectReplicasToDelete(list, 5)).toEqual([]);
  });
});
