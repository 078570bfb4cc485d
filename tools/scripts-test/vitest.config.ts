import { packageTestConfig } from '../../vitest.shared.ts';

// The summary test runs vitest itself on six fixture projects, one after another: about 2 s each on an idle 2-core
// machine, many times that while the control-plane suites run beside it.
export default packageTestConfig({ testTimeout: 300_000 });
