import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { LaneSequencer } from './sequencer.js';

/**
 * The kind lane: every e2e file of `test/` unchanged, then the lane's own files (`kind/test/`), against the Pods the
 * lane's global setup installs on a kind cluster. Its own report, `kind/test-results.json`, so the local e2e run's
 * report in `e2e/` stays what it was. `kind/test/lifecycle.test.ts` runs first (`LaneSequencer`): the lane installs
 * the previous release and that file upgrades it to this tree.
 */
export default defineConfig({
  root: fileURLToPath(new URL('..', import.meta.url)),
  test: {
    include: ['test/**/*.test.ts', 'kind/test/**/*.test.ts'],
    // test/capv/capv.test.ts included: on the lane it installs CAPV as a Pod (kind/lane/capv.ts) and runs against
    // Tally's Deployment.
    exclude: ['**/node_modules/**', '**/dist/**'],
    reporters: ['default', ['json', { outputFile: fileURLToPath(new URL('./test-results.json', import.meta.url)) }]],
    globalSetup: ['kind/global-setup.ts'],
    sequence: { sequencer: LaneSequencer },
    // Controllers in Pods on a loaded 2-core machine; a 2,000-claim burst with a leader change.
    testTimeout: 900_000,
    // The cluster, node image build included on a fresh machine.
    hookTimeout: 3_600_000,
    fileParallelism: false,
    passWithNoTests: false,
  },
});
