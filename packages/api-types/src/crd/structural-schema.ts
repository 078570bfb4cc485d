import * as z from 'zod';

/** A JSON value as it appears in an OpenAPI schema (defaults, enums). */
export type JSONValue = string | number | boolean | null | JSONValue[] | { [key: string]: JSONValue };

/** One `x-kubernetes-validations` rule. */
export interface ValidationRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

/** The subset of apiextensions.k8s.io/v1 JSONSchemaProps a structural schema may use. */
export interface JSONSchemaProps {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  format?: string;
  description?: string;
  properties?: Record<string, JSONSchemaProps>;
  additionalProperties?: JSONSchemaProps;
  required?: string[];
  items?: JSONSchemaProps;
  enum?: JSONValue[];
  default?: JSONValue;
  nullable?: boolean;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  maxProperties?: number;
  'x-kubernetes-validations'?: ValidationRule[];
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
}

/** A zod schema that cannot be expressed as a structural CRD schema; `path` points at the offending node. */
export class StructuralSchemaError extends Error {
  readonly path: string;

  constructor(path: string, reason: string) {
    super(`cannot build a structural schema at ${path || '<root>'}: ${reason}`);
    this.name = 'StructuralSchemaError';
    this.path = path;
  }
}

/**
 * `.meta()` key of an object schema the API server should store without checking its fields: the CRD keeps the node's
 * `type`, `description` and `required` and marks it `x-kubernetes-preserve-unknown-fields`; zod still checks every
 * field where the object is read. For the items of large lists written often by one controller and never by hand,
 * where the API server's schema validation of every field of every item is most of a write's cost.
 */
export const UNCHECKED_BY_API_SERVER = 'x-tally-unchecked-by-api-server';

/** Keys a structural schema must not contain at all (KEP-2335). */
const FORBIDDEN_KEYS = ['$ref', '$defs', 'definitions', 'dependencies', 'patternProperties', 'allOf', 'not', 'oneOf'];
/** Keys zod emits that carry no meaning for the API server and are dropped. */
const DROPPED_KEYS = ['$schema', '$id', 'id', 'readOnly', 'writeOnly', 'propertyNames', 'examples', 'title'];
/** Formats the API server validates; any other format would be silently ignored, so it is removed. */
const KUBERNETES_FORMATS = new Set([
  'bsonobjectid',
  'uri',
  'email',
  'hostname',
  'ipv4',
  'ipv6',
  'cidr',
  'mac',
  'uuid',
  'uuid3',
  'uuid4',
  'uuid5',
  'isbn',
  'isbn10',
  'isbn13',
  'creditcard',
  'ssn',
  'hexcolor',
  'rgbcolor',
  'byte',
  'password',
  'date',
  'duration',
  'datetime',
  'date-time',
  'int32',
  'int64',
  'float',
  'double',
]);
const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;

type RawSchema = Record<string, unknown>;

function isRecord(value: unknown): value is RawSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isEmptySchema(value: unknown): boolean {
  return isRecord(value) && Object.keys(value).length === 0;
}

/** `anyOf: [{type: integer}, {type: string}]` (in either order) is Kubernetes' int-or-string. */
function isIntOrString(anyOf: unknown): boolean {
  if (!Array.isArray(anyOf) || anyOf.length !== 2) return false;
  const types = anyOf.map((branch) => (isRecord(branch) ? branch.type : undefined)).sort();
  return types[0] === 'integer' && types[1] === 'string';
}

function normaliseInteger(node: RawSchema): void {
  const declared = typeof node.format === 'string' ? node.format : undefined;
  const isInt32Bounds = node.minimum === INT32_MIN && node.maximum === INT32_MAX;
  node.format = declared ?? (isInt32Bounds ? 'int32' : 'int64');
  // zod writes JavaScript's safe-integer range as bounds; the API server stores int64, so they are noise — unless
  // the schema declared its format itself, which marks the bounds as meant (e.g. counts a JS reader must get back).
  if (declared !== undefined) return;
  if (node.minimum === Number.MIN_SAFE_INTEGER) delete node.minimum;
  if (node.maximum === Number.MAX_SAFE_INTEGER) delete node.maximum;
}

function normaliseNumber(node: RawSchema): void {
  if (node.minimum === -Number.MAX_VALUE) delete node.minimum;
  if (node.maximum === Number.MAX_VALUE) delete node.maximum;
  if (node.format === undefined) node.format = 'double';
}

function normaliseString(node: RawSchema, path: string): void {
  const format = node.format;
  if (typeof format !== 'string') return;
  if (format === 'cidrv4' || format === 'cidrv6') node.format = 'cidr';
  if (KUBERNETES_FORMATS.has(String(node.format))) {
    // The format is checked by the API server; zod's pattern for it is a JS regex that may not be RE2.
    delete node.pattern;
    return;
  }
  if (node.pattern === undefined) {
    throw new StructuralSchemaError(path, `string format "${format}" is not validated by Kubernetes`);
  }
  delete node.format;
}

function convertNode(input: unknown, path: string): JSONSchemaProps {
  if (!isRecord(input)) throw new StructuralSchemaError(path, 'schema node is not an object');
  const node: RawSchema = { ...input };
  for (const key of FORBIDDEN_KEYS) {
    if (key in node) throw new StructuralSchemaError(path, `"${key}" is not allowed (recursive or union type?)`);
  }
  for (const key of DROPPED_KEYS) delete node[key];
  if ('const' in node) {
    node.enum = [node.const];
    delete node.const;
  }
  if ('anyOf' in node) {
    if (!isIntOrString(node.anyOf)) {
      throw new StructuralSchemaError(path, 'unions are not structural; model them as one object plus CEL rules');
    }
    delete node.anyOf;
    node['x-kubernetes-int-or-string'] = true;
    return node as JSONSchemaProps;
  }
  if (UNCHECKED_BY_API_SERVER in node) return uncheckedObject(node, path);
  if (Object.keys(node).every((key) => key === 'description' || key === 'default')) {
    // z.unknown()/z.any(): keep whatever is there.
    node['x-kubernetes-preserve-unknown-fields'] = true;
    return node as JSONSchemaProps;
  }

  switch (node.type) {
    case 'object': {
      const additional = node.additionalProperties;
      if (additional === false) delete node.additionalProperties;
      else if (isEmptySchema(additional)) {
        delete node.additionalProperties;
        node['x-kubernetes-preserve-unknown-fields'] = true;
      } else if (additional !== undefined) {
        if (node.properties !== undefined) {
          throw new StructuralSchemaError(path, 'an object cannot have both properties and additionalProperties');
        }
        node.additionalProperties = convertNode(additional, `${path}[*]`);
      }
      if (isRecord(node.properties)) {
        const properties: Record<string, JSONSchemaProps> = {};
        for (const [name, child] of Object.entries(node.properties)) {
          properties[name] = convertNode(child, path ? `${path}.${name}` : name);
        }
        node.properties = properties;
      }
      if (Array.isArray(node.required) && node.required.length === 0) delete node.required;
      break;
    }
    case 'array':
      if (!isRecord(node.items)) throw new StructuralSchemaError(path, 'an array needs one items schema');
      node.items = convertNode(node.items, `${path}[*]`);
      if (node.uniqueItems === true) {
        throw new StructuralSchemaError(path, 'uniqueItems is not allowed; use x-kubernetes-list-type: set');
      }
      break;
    case 'integer':
      normaliseInteger(node);
      break;
    case 'number':
      normaliseNumber(node);
      break;
    case 'string':
      normaliseString(node, path);
      break;
    case 'boolean':
      break;
    default:
      if (node['x-kubernetes-preserve-unknown-fields'] !== true) {
        throw new StructuralSchemaError(path, `every node needs a single type, found ${JSON.stringify(node.type)}`);
      }
  }
  return node as JSONSchemaProps;
}

/** An object node marked `UNCHECKED_BY_API_SERVER`: its type, description and required fields, the rest preserved. */
function uncheckedObject(node: RawSchema, path: string): JSONSchemaProps {
  if (node[UNCHECKED_BY_API_SERVER] !== true || node.type !== 'object') {
    throw new StructuralSchemaError(path, `${UNCHECKED_BY_API_SERVER} must be true and on an object schema`);
  }
  const unchecked: JSONSchemaProps = { type: 'object' };
  if (typeof node.description === 'string') unchecked.description = node.description;
  if (Array.isArray(node.required) && node.required.length > 0) unchecked.required = node.required.map(String);
  unchecked['x-kubernetes-preserve-unknown-fields'] = true;
  return unchecked;
}

/**
 * The structural OpenAPI v3 schema of a zod schema, as a CRD version's `openAPIV3Schema` needs it.
 *
 * zod's `toJSONSchema` is close but not structural; this rewrites its output (see README "How CRDs are generated"):
 * `const` → `enum`, loose objects → `x-kubernetes-preserve-unknown-fields`, integer bounds → `format`, formats the
 * API server does not know removed, and anything not representable (`$ref`, unions, recursion) refused loudly.
 * `.meta()` keys (`x-kubernetes-validations`, list types, …) pass through unchanged.
 */
export function toStructuralSchema(schema: z.ZodType): JSONSchemaProps {
  const raw = z.toJSONSchema(schema, {
    target: 'openapi-3.0',
    io: 'input',
    unrepresentable: 'throw',
    cycles: 'throw',
    reused: 'inline',
  });
  return convertNode(raw, '');
}
