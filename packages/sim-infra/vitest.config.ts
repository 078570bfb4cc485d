import { packageTestConfig } from '../../vitest.shared.ts';

// The integration tests run both providers against one real control plane; a reconcile chain (claim → IPAddress →
// SimMachine status → Node) takes seconds on a loaded machine, so the per-test budget is generous.
export default packageTestConfig({ testTimeout: 180_000, globalSetup: ['./test/global-setup.ts'] });
