import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { StructuralSchemaError } from '../src/crd/structural-schema.js';
import { generatedCRDFiles, type JSONSchemaProps, toStructuralSchema, UNCHECKED_BY_API_SERVER } from '../src/index.js';

/** Keys KEP-2335 forbids anywhere in a structural schema, plus what zod emits that the API server does not know. */
const FORBIDDEN = [
  '$ref',
  '$defs',
  'definitions',
  'dependencies',
  'patternProperties',
  'allOf',
  'anyOf',
  'oneOf',
  'not',
];
const UNKNOWN_TO_KUBERNETES = ['$schema', 'const', 'propertyNames', 'examples', 'readOnly', 'writeOnly', 'id', '$id'];

interface Violation {
  path: string;
  problem: string;
}

function structuralViolations(node: JSONSchemaProps, path: string, out: Violation[]): Violation[] {
  const keys = Object.keys(node);
  for (const key of [...FORBIDDEN, ...UNKNOWN_TO_KUBERNETES]) {
    if (keys.includes(key)) out.push({ path, problem: `has ${key}` });
  }
  const untypedAllowed = node['x-kubernetes-preserve-unknown-fields'] === true || node['x-kubernetes-int-or-string'];
  if (node.type === undefined && !untypedAllowed) out.push({ path, problem: 'has no type' });
  if ((node as Record<string, unknown>).additionalProperties === false)
    out.push({ path, problem: 'additionalProperties: false' });
  if (node.properties && node.additionalProperties) out.push({ path, problem: 'properties and additionalProperties' });
  if (node.type === 'integer' && node.format !== 'int32' && node.format !== 'int64') {
    out.push({ path, problem: `integer format ${String(node.format)}` });
  }
  if (node.type === 'array' && node.items === undefined) out.push({ path, problem: 'array without items' });
  for (const [name, child] of Object.entries(node.properties ?? {}))
    structuralViolations(child, `${path}.${name}`, out);
  if (node.items) structuralViolations(node.items, `${path}[*]`, out);
  if (node.additionalProperties) structuralViolations(node.additionalProperties, `${path}{*}`, out);
  return out;
}

describe('generated CRDs are structural', () => {
  const files = generatedCRDFiles();

  it('generates the four pool CRDs and the address ledger CRD under CAPI names', () => {
    expect(files.map((file) => file.crd.metadata.name).sort()).toEqual([
      'globaltallyippools.ipam.cluster.x-k8s.io',
      'globaltallyprefixpools.ipam.cluster.x-k8s.io',
      'tallyaddressledgers.ipam.cluster.x-k8s.io',
      'tallyippools.ipam.cluster.x-k8s.io',
      'tallyprefixpools.ipam.cluster.x-k8s.io',
    ]);
  });

  it.each(files.map((file) => [file.fileName, file] as const))('%s: every node typed, no forbidden keys', (_, file) => {
    for (const version of file.crd.spec.versions) {
      expect(structuralViolations(version.schema.openAPIV3Schema, '', [])).toEqual([]);
    }
  });

  it.each(files.map((file) => [file.fileName, file] as const))('%s: metadata is left to the API server', (_, file) => {
    const root = file.crd.spec.versions[0]?.schema.openAPIV3Schema;
    expect(root?.properties?.metadata).toEqual({ type: 'object' });
    expect(root?.required).toEqual(['spec']);
    if (file.crd.spec.names.kind === 'TallyAddressLedger') {
      // A ledger has no status and is not a Cluster API object users list with `kubectl get cluster-api`.
      expect(file.crd.spec.versions[0]?.subresources).toBeUndefined();
      expect(file.crd.spec.scope).toBe('Cluster');
      return;
    }
    expect(file.crd.spec.versions[0]?.subresources).toEqual({ status: {} });
    expect(file.crd.spec.names.categories).toEqual(['cluster-api']);
  });

  it('keeps CEL rules, list types and defaults from the zod metadata', () => {
    const ipPool = files.find((file) => file.crd.spec.names.kind === 'TallyIPPool');
    const spec = ipPool?.crd.spec.versions[0]?.schema.openAPIV3Schema.properties?.spec;
    expect(spec?.['x-kubernetes-validations']?.length).toBeGreaterThan(5);
    expect(spec?.properties?.addresses?.items?.['x-kubernetes-validations']?.[0]?.rule).toContain('isCIDR(self)');
    expect(spec?.properties?.reservations?.['x-kubernetes-list-type']).toBe('map');
    expect(spec?.properties?.reservations?.['x-kubernetes-list-map-keys']).toEqual(['claimName']);
    expect(spec?.properties?.allocationStrategy).toMatchObject({
      type: 'string',
      enum: ['LowestFree', 'Random', 'LeastRecentlyReleased'],
      default: 'LowestFree',
    });
    expect(spec?.properties?.prefix).toMatchObject({ type: 'integer', format: 'int32', minimum: 0, maximum: 128 });
    expect(spec?.required).toEqual(['addresses', 'prefix']);
  });
});

describe('toStructuralSchema', () => {
  it('rewrites const, loose objects, unknown values, records and integer bounds', () => {
    const schema = z.object({
      literal: z.literal('x'),
      loose: z.looseObject({ a: z.string() }),
      anything: z.unknown().optional(),
      labels: z.record(z.string(), z.string()),
      count: z.int(),
      small: z.int32(),
      ratio: z.number(),
      when: z.iso.datetime(),
    });
    expect(toStructuralSchema(schema)).toEqual({
      type: 'object',
      properties: {
        literal: { type: 'string', enum: ['x'] },
        loose: {
          type: 'object',
          properties: { a: { type: 'string' } },
          required: ['a'],
          'x-kubernetes-preserve-unknown-fields': true,
        },
        anything: { 'x-kubernetes-preserve-unknown-fields': true },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        count: { type: 'integer', format: 'int64' },
        small: { type: 'integer', format: 'int32', minimum: -2147483648, maximum: 2147483647 },
        ratio: { type: 'number', format: 'double' },
        when: { type: 'string', format: 'date-time' },
      },
      required: ['literal', 'loose', 'labels', 'count', 'small', 'ratio', 'when'],
    });
  });

  it('keeps integer bounds when the schema declares its format', () => {
    const counted = z.object({ count: z.int().min(0).max(Number.MAX_SAFE_INTEGER).meta({ format: 'int64' }) });
    expect(toStructuralSchema(counted).properties?.count).toEqual({
      type: 'integer',
      format: 'int64',
      minimum: 0,
      maximum: Number.MAX_SAFE_INTEGER,
    });
  });

  it('maps int-or-string unions to x-kubernetes-int-or-string', () => {
    expect(toStructuralSchema(z.union([z.int32(), z.string()]))).toEqual({ 'x-kubernetes-int-or-string': true });
  });

  it.each([
    ['a union of objects', z.object({ a: z.union([z.object({ x: z.string() }), z.object({ y: z.string() })]) }), 'a'],
    ['a union of strings and booleans', z.object({ b: z.union([z.string(), z.boolean()]) }), 'b'],
    ['a tuple', z.object({ c: z.tuple([z.string(), z.boolean()]) }), 'c[*]'],
    ['a string format Kubernetes ignores', z.object({ d: z.string().meta({ format: 'ulid' }) }), 'd'],
  ])('refuses %s and names the path', (_, schema, path) => {
    expect(() => toStructuralSchema(schema)).toThrow(StructuralSchemaError);
    try {
      toStructuralSchema(schema);
    } catch (error) {
      expect((error as StructuralSchemaError).path).toBe(path);
    }
  });

  it('keeps only type, description and required fields of an object marked unchecked by the API server', () => {
    const item = z
      .object({
        key: z
          .string()
          .min(1)
          .regex(/^[a-z]+$/),
        count: z.int().min(0).optional(),
      })
      .meta({ description: 'one item', [UNCHECKED_BY_API_SERVER]: true });
    expect(toStructuralSchema(z.object({ items: z.array(item) })).properties?.items?.items).toEqual({
      type: 'object',
      description: 'one item',
      required: ['key'],
      'x-kubernetes-preserve-unknown-fields': true,
    });
    // The mark belongs to the CRD only: zod still checks every field.
    expect(item.safeParse({ key: 'A1' }).success).toBe(false);
  });

  it.each([
    ['on a string', z.object({ a: z.string().meta({ [UNCHECKED_BY_API_SERVER]: true }) }), 'a'],
    ['set to something but true', z.object({ b: z.object({}).meta({ [UNCHECKED_BY_API_SERVER]: 'yes' }) }), 'b'],
  ])('refuses the unchecked mark %s and names the path', (_, schema, path) => {
    expect(() => toStructuralSchema(schema)).toThrow(
      new RegExp(`at ${path.replace('.', '\\.')}: ${UNCHECKED_BY_API_SERVER}`),
    );
  });

  it('refuses recursive schemas', () => {
    interface Tree {
      children: Tree[];
    }
    const tree: z.ZodType<Tree> = z.lazy(() => z.object({ children: z.array(tree) }));
    expect(() => toStructuralSchema(tree)).toThrow();
  });
});
