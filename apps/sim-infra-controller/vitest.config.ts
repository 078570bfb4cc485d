import { packageTestConfig } from '../../vitest.shared.ts';

// Pure tests (flags, the RBAC manifests against the generated CRDs): no control plane needed.
export default packageTestConfig();
