import { packageTestConfig } from '../../vitest.shared.ts';

export default packageTestConfig({ testTimeout: 60_000 });
