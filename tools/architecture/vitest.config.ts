import { packageTestConfig } from '../../vitest.shared.ts';

// Parsing every TypeScript file of the workspace once takes about a second on a quiet machine and over 10 s at load
// 15 on two cores (a setup hook failed at vitest's 10 s default). The work is bounded by the tree, not by time: the
// timeout only stops a hang.
export default packageTestConfig({ testTimeout: 120_000 });
