import { packageTestConfig } from '../../vitest.shared.ts';

// No global setup: the files that need an API server start one of their own (test/support.ts).
export default packageTestConfig({ testTimeout: 180_000 });
