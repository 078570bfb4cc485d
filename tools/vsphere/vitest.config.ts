import { packageTestConfig } from '../../vitest.shared.ts';

// The simulator binary comes from the prepare stage; a run without it builds it in beforeAll, with progress lines.
export default packageTestConfig({ testTimeout: 600_000, sequential: true });
