import { packageTestConfig } from '../../vitest.shared.ts';

// A registry, a changesets run, npm installs, clusterctl: many minutes on a loaded 2-core machine; one file at a time.
export default packageTestConfig({
  globalSetup: ['test/global-setup.ts', 'test/global-setup-plane.ts'],
  testTimeout: 900_000,
  sequential: true,
});
