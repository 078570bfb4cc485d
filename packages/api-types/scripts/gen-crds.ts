/**
 * Writes the generated CRDs to config/crd/ (run: `pnpm --filter @tally-ipam/api-types gen-crds`).
 * With `--check` it writes nothing and exits 1 when a committed file differs, for CI.
 */
import { runGenCRDs } from '../src/crd/crd-files.js';
import { generatedCRDFiles, tallyCRDDirectory } from '../src/crds.js';

process.exitCode = await runGenCRDs(tallyCRDDirectory(), generatedCRDFiles(), {
  argv: process.argv,
  regenerate: 'pnpm --filter @tally-ipam/api-types gen-crds',
});
