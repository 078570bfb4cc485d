import { fileURLToPath } from 'node:url';
import type { CustomResourceDefinition } from './crd/custom-resource-definition.js';
import { crdToYaml } from './crd/yaml.js';
import { tallyCustomResourceDefinitions } from './tally/v1alpha1/crds.js';

/** A generated CRD with the file name it is committed under (`config/crd/<group>_<plural>.yaml`). */
export interface GeneratedCRDFile {
  /** controller-gen's convention, which the reference providers' `config/crd/bases` also follow. */
  fileName: string;
  crd: CustomResourceDefinition;
  yaml: string;
}

/** Every CRD this package owns, with its committed file name and YAML (what `gen-crds` writes). */
export function generatedCRDFiles(): GeneratedCRDFile[] {
  return tallyCustomResourceDefinitions().map((crd) => ({
    fileName: `${crd.spec.group}_${crd.spec.names.plural}.yaml`,
    crd,
    yaml: crdToYaml(crd),
  }));
}

/** All Tally CRDs as one multi-document YAML stream (for `kubectl apply -f -` or client-node's `loadAllYaml`). */
export function tallyCRDsYaml(): string {
  return generatedCRDFiles()
    .map((file) => file.yaml)
    .join('');
}

/**
 * Absolute path of the committed CRD directory (`config/crd/`, shipped in the package), for installers that take
 * files, e.g. testenv's `installCRDs(kc, [tallyCRDDirectory()])` or `kubectl apply --server-side -f`.
 */
export function tallyCRDDirectory(): string {
  return fileURLToPath(new URL('../config/crd/', import.meta.url));
}
