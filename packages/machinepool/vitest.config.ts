import { packageTestConfig } from '../../vitest.shared.ts';

export default packageTestConfig({ testTimeout: 120_000, globalSetup: ['./test/global-setup.ts'] });
