import { packageTestConfig } from '../../vitest.shared.ts';

export default packageTestConfig({ testTimeout: 180_000, globalSetup: ['./test/global-setup.ts'] });
