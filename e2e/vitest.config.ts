import { mergeConfig } from 'vitest/config';
import { packageTestConfig } from '../vitest.shared.ts';

const config = packageTestConfig({
  globalSetup: ['test/global-setup.ts'],
  // Real controllers on a loaded 2-core machine: Cluster API requeues some steps after 10-30 s.
  testTimeout: 300_000,
  // One control plane and one Cluster API manager shared by every file; files run one after another.
  sequential: true,
});

// On an external cluster (TALLY_TEST_KUBECONFIG) the apps run without webhooks: its API server, in a kind node
// container, cannot call this machine's loopback (README, "External mode"). The admission tests need them, so they
// are not part of that run; admission.test.ts also fails loudly if it ever runs without them.
export default process.env.TALLY_TEST_KUBECONFIG
  ? mergeConfig(config, {
      test: { exclude: ['**/node_modules/**', '**/dist/**', 'test/admission.test.ts'] },
    })
  : config;
