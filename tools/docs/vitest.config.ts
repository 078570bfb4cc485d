import { packageTestConfig } from '../../vitest.shared.ts';

// One control plane and one controller process for the whole project (test/global-setup.ts); the files run one after
// another because the example pages share that controller's pools' address space. Every wait is for a state, with a
// deadline that only bounds a hang on a loaded machine.
export default packageTestConfig({ globalSetup: ['test/global-setup.ts'], testTimeout: 600_000, sequential: true });
