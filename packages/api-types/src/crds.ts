import { fileURLToPath } from 'node:url';
import { crdFiles, crdFilesYaml, type GeneratedCRDFile } from './crd/crd-files.js';
import { tallyCustomResourceDefinitions } from './tally/v1alpha1/crds.js';

/** Every CRD this package owns, with its committed file name and YAML (what `gen-crds` writes). */
export function generatedCRDFiles(): GeneratedCRDFile[] {
  return crdFiles(tallyCustomResourceDefinitions());
}

/** All Tally CRDs as one multi-document YAML stream (for `kubectl apply -f -` or client-node's `loadAllYaml`). */
export function tallyCRDsYaml(): string {
  return crdFilesYaml(generatedCRDFiles());
}

/**
 * Absolute path of the committed CRD directory (`config/crd/`, shipped in the package), for installers that take
 * files, e.g. testenv's `installCRDs(kc, [tallyCRDDirectory()])` or `kubectl apply --server-side -f`.
 */
export function tallyCRDDirectory(): string {
  return fileURLToPath(new URL('../config/crd/', import.meta.url));
}
