import { packageTestConfig } from '../../vitest.shared.ts';

// The process test runs the built controller against a real control plane: seconds per step on a loaded machine.
export default packageTestConfig({ globalSetup: ['test/global-setup.ts'], testTimeout: 180_000, sequential: true });
