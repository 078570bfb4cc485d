import { packageTestConfig } from '../../vitest.shared.ts';

// The tests run the built controller as child processes against real control planes: minutes, not seconds, and one
// file at a time so two suites' controllers never compete for the machine's two cores.
export default packageTestConfig({ globalSetup: ['test/global-setup.ts'], testTimeout: 1_200_000, sequential: true });
