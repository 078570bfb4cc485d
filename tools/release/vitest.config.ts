import { packageTestConfig } from '../../vitest.shared.ts';

// Packing, an npm install and a changesets run per file: tens of seconds on a loaded machine; files one at a time.
export default packageTestConfig({ testTimeout: 300_000, sequential: true });
