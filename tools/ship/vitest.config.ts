import { packageTestConfig } from '../../vitest.shared.ts';

// Pure tests (files and text): no control plane.
export default packageTestConfig({ testTimeout: 30_000 });
