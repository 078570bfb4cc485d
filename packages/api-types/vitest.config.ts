import { packageTestConfig } from '../../vitest.shared.ts';

export default packageTestConfig({ globalSetup: ['test/global-setup.ts'], testTimeout: 60_000 });
