import { packageTestConfig } from '../vitest.shared.ts';

export default packageTestConfig({
  globalSetup: ['test/global-setup.ts'],
  // Real controllers on a loaded 2-core machine: Cluster API requeues some steps after 10-30 s.
  testTimeout: 300_000,
  // One control plane and one Cluster API manager shared by every file; files run one after another.
  sequential: true,
});
