export { contractVersionLabel } from './contract-labels.js';
export {
  type CRDDrift,
  crdFiles,
  crdFilesYaml,
  diffCRDs,
  type GeneratedCRDFile,
  runGenCRDs,
  writeCRDs,
} from './crd-files.js';
export { calculateCRDName, pluralResourceName } from './crd-name.js';
export {
  buildCustomResourceDefinition,
  type CustomResourceDefinition,
  type CustomResourceDefinitionInput,
  type CustomResourceDefinitionVersion,
  type CustomResourceVersionInput,
  type PrinterColumn,
} from './custom-resource-definition.js';
export { pluralize } from './pluralize.js';
export {
  type JSONSchemaProps,
  type JSONValue,
  StructuralSchemaError,
  toStructuralSchema,
  UNCHECKED_BY_API_SERVER,
  type ValidationRule,
} from './structural-schema.js';
export {
  type ValidationMessageProblem,
  validationMessageProblems,
} from './validation-messages.js';
export { crdToYaml } from './yaml.js';
