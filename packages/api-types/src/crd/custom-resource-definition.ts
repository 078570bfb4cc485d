import type * as z from 'zod';
import { calculateCRDName, pluralResourceName } from './crd-name.js';
import { type JSONSchemaProps, toStructuralSchema, type ValidationRule } from './structural-schema.js';

/** One `additionalPrinterColumns` entry (what `kubectl get` shows). */
export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  jsonPath: string;
  description?: string;
  format?: string;
  /** 0 = always shown; greater values only with `-o wide`. */
  priority?: number;
}

export interface CustomResourceVersionInput {
  name: string;
  /** The whole object (apiVersion, kind, metadata, spec, status); metadata is replaced by `{type: object}`. */
  schema: z.ZodType;
  served?: boolean;
  storage?: boolean;
  deprecated?: boolean;
  /** Expose `/status` so that the main resource cannot write status and the controller's writes skip spec. */
  statusSubresource?: boolean;
  printerColumns?: PrinterColumn[];
  /** Rules on the whole object (e.g. comparing spec with metadata). */
  validations?: ValidationRule[];
}

export interface CustomResourceDefinitionInput {
  group: string;
  kind: string;
  scope: 'Namespaced' | 'Cluster';
  versions: CustomResourceVersionInput[];
  shortNames?: string[];
  categories?: string[];
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface CustomResourceDefinitionVersion {
  name: string;
  served: boolean;
  storage: boolean;
  deprecated?: boolean;
  schema: { openAPIV3Schema: JSONSchemaProps };
  subresources?: { status: Record<string, never> };
  additionalPrinterColumns?: PrinterColumn[];
}

/** An apiextensions.k8s.io/v1 CustomResourceDefinition as a plain object (serialise with {@link crdToYaml}). */
export interface CustomResourceDefinition {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: {
    group: string;
    names: {
      kind: string;
      listKind: string;
      plural: string;
      singular: string;
      shortNames?: string[];
      categories?: string[];
    };
    scope: 'Namespaced' | 'Cluster';
    versions: CustomResourceDefinitionVersion[];
  };
}

/** The top-level fields every object has; their schemas belong to the API server, not to the CRD author. */
const TYPE_META_DESCRIPTIONS = {
  apiVersion:
    'APIVersion defines the versioned schema of this representation of an object. Servers should convert ' +
    'recognized schemas to the latest internal value, and may reject unrecognized values.',
  kind:
    'Kind is a string value representing the REST resource this object represents. Servers may infer this ' +
    'from the endpoint the client submits requests to. In CamelCase.',
};

function objectSchema(version: CustomResourceVersionInput, crdName: string): JSONSchemaProps {
  const converted = toStructuralSchema(version.schema);
  if (converted.type !== 'object' || converted.properties === undefined) {
    throw new Error(`CRD ${crdName} version ${version.name}: the schema must be an object with properties`);
  }
  const { apiVersion: _apiVersion, kind: _kind, metadata: _metadata, ...fields } = converted.properties;
  const schema: JSONSchemaProps = {
    type: 'object',
    properties: {
      apiVersion: { type: 'string', description: TYPE_META_DESCRIPTIONS.apiVersion },
      kind: { type: 'string', description: TYPE_META_DESCRIPTIONS.kind },
      metadata: { type: 'object' },
      ...fields,
    },
  };
  if (converted.description !== undefined) schema.description = converted.description;
  const required = (converted.required ?? []).filter((name) => !['apiVersion', 'kind', 'metadata'].includes(name));
  if (required.length > 0) schema.required = required;
  const validations = [...(converted['x-kubernetes-validations'] ?? []), ...(version.validations ?? [])];
  if (validations.length > 0) schema['x-kubernetes-validations'] = validations;
  return schema;
}

/**
 * Builds a CRD from zod schemas. The name is CAPI's `CalculateCRDName(group, kind)`, so Cluster API can find
 * the CRD from a `{apiGroup, kind}` reference; the plural is flect's. Generic on purpose: Tally's pools and the
 * Sim infrastructure kinds are all built here.
 */
export function buildCustomResourceDefinition(input: CustomResourceDefinitionInput): CustomResourceDefinition {
  const name = calculateCRDName(input.group, input.kind);
  const storageVersions = input.versions.filter((version) => version.storage ?? input.versions.length === 1);
  if (storageVersions.length !== 1) {
    throw new Error(`CRD ${name}: exactly one version must be the storage version, found ${storageVersions.length}`);
  }
  const metadata: CustomResourceDefinition['metadata'] = { name };
  if (input.labels && Object.keys(input.labels).length > 0) metadata.labels = { ...input.labels };
  if (input.annotations && Object.keys(input.annotations).length > 0) metadata.annotations = { ...input.annotations };
  const names: CustomResourceDefinition['spec']['names'] = {
    kind: input.kind,
    listKind: `${input.kind}List`,
    plural: pluralResourceName(input.kind),
    singular: input.kind.toLowerCase(),
  };
  if (input.shortNames?.length) names.shortNames = [...input.shortNames];
  if (input.categories?.length) names.categories = [...input.categories];
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata,
    spec: {
      group: input.group,
      names,
      scope: input.scope,
      versions: input.versions.map((version) => {
        const built: CustomResourceDefinitionVersion = {
          name: version.name,
          served: version.served ?? true,
          storage: version === storageVersions[0],
          schema: { openAPIV3Schema: objectSchema(version, name) },
        };
        if (version.deprecated) built.deprecated = true;
        if (version.statusSubresource) built.subresources = { status: {} };
        if (version.printerColumns?.length) built.additionalPrinterColumns = version.printerColumns;
        return built;
      }),
    },
  };
}
