import { fileURLToPath } from 'node:url';
import { CLUSTER_API_VERSION_ENV, OLDEST_CLUSTER_API_VERSION } from '@tally-ipam/testenv';
import { defineConfig } from 'vitest/config';

/**
 * The compatibility job: the e2e suite's contract files, the CAPV scenario and the clusterctl lifecycle again, on the oldest Cluster API release
 * still supported (testenv's `OLDEST_CLUSTER_API_VERSION`, with the CAPV release paired with it), after the main run
 * has run the whole suite on the default one. The release is set for the whole process here, before the global setup
 * builds or finds its manager, CRDs and clusterctl, so that nothing in the run can use another one.
 * Its own report, `compat/test-results.json`, so the main run's report in `e2e/` stays what it was.
 */
process.env[CLUSTER_API_VERSION_ENV] = OLDEST_CLUSTER_API_VERSION;

export default defineConfig({
  root: fileURLToPath(new URL('..', import.meta.url)),
  test: {
    include: [
      // Claims, addresses and pools through the real Cluster API manager of that release, with its webhooks on.
      'test/cluster.test.ts',
      'test/scenario.test.ts',
      // v1beta1 claims converted by that release's conversion webhook (CAPV v1.15.2 creates v1beta1 claims).
      'test/ipam-conversion.test.ts',
      'test/admission.test.ts',
      'test/capv/capv.test.ts',
      // clusterctl of that release installs, upgrades, moves and deletes Tally without losing an allocation. The
      // upgrade's "previous release" is Tally's (built from git), not Cluster API's: it holds on this release too.
      'test/lifecycle/lifecycle.test.ts',
      // The README's compatibility table has this release's row.
      'test/compatibility.test.ts',
    ],
    exclude: ['**/node_modules/**', '**/dist/**'],
    env: { [CLUSTER_API_VERSION_ENV]: OLDEST_CLUSTER_API_VERSION },
    reporters: ['default', ['json', { outputFile: fileURLToPath(new URL('./test-results.json', import.meta.url)) }]],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 300_000,
    hookTimeout: 300_000,
    fileParallelism: false,
    passWithNoTests: false,
  },
});
