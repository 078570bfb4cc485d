import { packageTestConfig } from '../../vitest.shared.ts';

// The summary test runs vitest itself on fixture projects (a few seconds each on 2 cores).
export default packageTestConfig({ testTimeout: 120_000 });
