import { packageTestConfig } from '../../vitest.shared.ts';

// Parsing every TypeScript file of the workspace once takes about a second; the default timeout is enough.
export default packageTestConfig();
