import { fileURLToPath } from 'node:url';
import { createGlobalSetup } from '@tally-ipam/testenv/vitest';

/** One control plane for every test file of the package, with the test CRDs of `fixtures/crds` installed. */
export default createGlobalSetup({
  crds: [fileURLToPath(new URL('./fixtures/crds', import.meta.url))],
});
