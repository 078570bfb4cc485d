/**
 * Writes the generated CRDs to config/crd/ and the Metal3 CRDs to config/metal3/crd/ and the
 * in-cluster provider's CRDs to config/in-cluster/crd/ (run:
 * `pnpm --filter @tally-ipam/api-types gen-crds`). With `--check` it writes nothing and exits 1 when a committed file
 * differs, for CI.
 */
import { runGenCRDs } from '../src/crd/crd-files.js';
import { generatedCRDFiles, tallyCRDDirectory } from '../src/crds.js';
import { inClusterCRDDirectory, inClusterGeneratedCRDFiles } from '../src/incluster/v1alpha2/crds.js';
import { metal3CRDDirectory, metal3GeneratedCRDFiles } from '../src/metal3/v1alpha1/crds.js';

const options = { argv: process.argv, regenerate: 'pnpm --filter @tally-ipam/api-types gen-crds' };
const tally = await runGenCRDs(tallyCRDDirectory(), generatedCRDFiles(), options);
const metal3 = await runGenCRDs(metal3CRDDirectory(), metal3GeneratedCRDFiles(), options);
const inCluster = await runGenCRDs(inClusterCRDDirectory(), inClusterGeneratedCRDFiles(), options);
process.exitCode = Math.max(tally, metal3, inCluster);
