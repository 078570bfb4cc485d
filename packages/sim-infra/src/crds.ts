import { fileURLToPath } from 'node:url';
import { type CustomResourceDefinition, crdToYaml } from '@tally-ipam/api-types';
import { simCustomResourceDefinitions } from './api/v1alpha1/crds.js';

/** A generated CRD with the file name it is committed under (`config/crd/<group>_<plural>.yaml`). */
export interface GeneratedSimCRDFile {
  fileName: string;
  crd: CustomResourceDefinition;
  yaml: string;
}

/** Every Sim CRD with its committed file name and YAML (what `gen-crds` writes and the drift test compares). */
export function generatedSimCRDFiles(): GeneratedSimCRDFile[] {
  return simCustomResourceDefinitions().map((crd) => ({
    fileName: `${crd.spec.group}_${crd.spec.names.plural}.yaml`,
    crd,
    yaml: crdToYaml(crd),
  }));
}

/** All Sim CRDs as one multi-document YAML stream. */
export function simCRDsYaml(): string {
  return generatedSimCRDFiles()
    .map((file) => file.yaml)
    .join('');
}

/** Absolute path of the committed CRD directory (shipped in the package), for installers that take files. */
export function simCRDDirectory(): string {
  return fileURLToPath(new URL('../config/crd/', import.meta.url));
}
