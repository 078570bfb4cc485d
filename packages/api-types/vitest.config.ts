import { packageTestConfig } from '../../vitest.shared.ts';

// A bound for a hang, not a speed: the API-server fuzz tests send a fixed number of dry runs (250 at most per test),
// each bounded by the API server's own request timeout, so the work is set by the run count; the former 60 s total
// was a time a machine whose two cores are shared can reach.
export default packageTestConfig({ globalSetup: ['test/global-setup.ts'], testTimeout: 600_000 });
