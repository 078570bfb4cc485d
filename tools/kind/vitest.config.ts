import { packageTestConfig } from '../../vitest.shared.ts';

// One kind cluster, created and deleted by the test file itself; the node image is built (or found in the cache) in
// its beforeAll, which therefore gets a timeout long enough for a cold build.
export default packageTestConfig({ testTimeout: 600_000, sequential: true });
