import { stringify } from 'yaml';
import type { CustomResourceDefinition } from './custom-resource-definition.js';

/**
 * YAML text of a CRD, stable across runs (so the committed files can be compared byte for byte).
 * Apply it through client-node's `loadAllYaml` or SSA of the parsed text: client-node's typed CRD serializer
 * drops `x-kubernetes-*`, `enum` and `default` from plain objects.
 */
export function crdToYaml(crd: CustomResourceDefinition): string {
  return `---\n${stringify(crd, { lineWidth: 0, aliasDuplicateObjects: false })}`;
}
