import type { TestSpecification } from 'vitest/node';
import { BaseSequencer } from 'vitest/node';

/** The lane's lifecycle file: it upgrades the installed providers to this tree, which every other file then tests. */
const FIRST = 'kind/test/lifecycle.test.ts';

/**
 * vitest's own order (by earlier durations and sizes), except that the lane's lifecycle file runs first: the lane
 * installs Tally and Sim at the previous release and that file upgrades them under running Pods.
 */
export class LaneSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const isFirst = (spec: TestSpecification): boolean => spec.moduleId.endsWith(FIRST);
    return [...sorted.filter(isFirst), ...sorted.filter((spec) => !isFirst(spec))];
  }
}
