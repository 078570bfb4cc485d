import { fileURLToPath } from 'node:url';
import { crdFiles, crdFilesYaml, type GeneratedCRDFile } from '@tally-ipam/api-types';
import { simCustomResourceDefinitions } from './api/v1alpha1/crds.js';

/** A generated Sim CRD with its committed file name; kept as a name of the published API. */
export type GeneratedSimCRDFile = GeneratedCRDFile;

/** Every Sim CRD with its committed file name and YAML (what `gen-crds` writes and the drift test compares). */
export function generatedSimCRDFiles(): GeneratedSimCRDFile[] {
  return crdFiles(simCustomResourceDefinitions());
}

/** All Sim CRDs as one multi-document YAML stream. */
export function simCRDsYaml(): string {
  return crdFilesYaml(generatedSimCRDFiles());
}

/** Absolute path of the committed CRD directory (shipped in the package), for installers that take files. */
export function simCRDDirectory(): string {
  return fileURLToPath(new URL('../config/crd/', import.meta.url));
}
