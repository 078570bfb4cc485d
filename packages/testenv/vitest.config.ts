import { packageTestConfig } from '../../vitest.shared.ts';

export default packageTestConfig({
  globalSetup: ['test/global-setup.ts'],
  // Starting extra control planes (lifecycle tests) and waiting for the garbage collector take a while on 2 cores.
  testTimeout: 120_000,
  // Lifecycle tests start their own control planes; one file at a time keeps a 2-core machine responsive.
  sequential: true,
});
