import { packageTestConfig } from '../../vitest.shared.ts';

// One file at a time: `pools` lists every cluster-scoped pool whatever the namespace, so a global pool one file creates
// would show in another file's exact listing ("No pools found." of an empty namespace) if they ran at once.
export default packageTestConfig({ testTimeout: 180_000, globalSetup: ['./test/global-setup.ts'], sequential: true });
