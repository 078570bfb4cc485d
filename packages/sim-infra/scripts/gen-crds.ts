/**
 * Writes the generated Sim CRDs to config/crd/ (run: `pnpm --filter @tally-ipam/sim-infra gen-crds`).
 * With `--check` it writes nothing and exits 1 when a committed file differs.
 */
import { runGenCRDs } from '@tally-ipam/api-types';
import { generatedSimCRDFiles, simCRDDirectory } from '../src/crds.js';

process.exitCode = await runGenCRDs(simCRDDirectory(), generatedSimCRDFiles(), {
  argv: process.argv,
  regenerate: 'pnpm --filter @tally-ipam/sim-infra gen-crds',
});
