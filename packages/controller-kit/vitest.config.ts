import { packageTestConfig } from '../../vitest.shared.ts';

// A bound for a hang, not a speed: the tests wait on a real control plane, each wait with testenv's 120 s default or a
// bound of its own, and a test timeout no longer than one such wait would fail a slow test with vitest's bare "timed
// out" in place of the wait's own message (what it waited for, the last state seen).
export default packageTestConfig({ testTimeout: 300_000, globalSetup: ['./test/global-setup.ts'] });
