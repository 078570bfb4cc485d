import { z } from 'zod';
import type { KubeObject } from '../cache/object.js';
import type { ResourceKind } from './resource.js';

const ownerReferenceSchema = z.looseObject({
  apiVersion: z.string(),
  kind: z.string(),
  name: z.string(),
  uid: z.string(),
  controller: z.boolean().optional(),
  blockOwnerDeletion: z.boolean().optional(),
});

/** The metadata every object the API server returns has; the rest of the object passes through untouched. */
export const objectMetaSchema = z.looseObject({
  name: z.string(),
  namespace: z.string().optional(),
  uid: z.string().optional(),
  resourceVersion: z.string().optional(),
  generation: z.number().optional(),
  labels: z.record(z.string(), z.string()).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
  ownerReferences: z.array(ownerReferenceSchema).optional(),
  finalizers: z.array(z.string()).optional(),
  deletionTimestamp: z.string().optional(),
  creationTimestamp: z.string().optional(),
  managedFields: z.array(z.unknown()).optional(),
});

/** Any Kubernetes object, validated as far as the kit reads it. */
export const kubeObjectSchema: z.ZodType<KubeObject> = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: objectMetaSchema,
});

/**
 * A resource together with the zod schema of its objects: the client parses every object it returns with it, so
 * reads are typed from validated data, not from a cast.
 */
export interface TypedResourceKind<T extends KubeObject> extends ResourceKind {
  readonly schema: z.ZodType<T>;
}

/** The object type a resource's objects are parsed into: the schema's type, or `KubeObject`. */
export type ObjectOf<R extends ResourceKind> = R extends TypedResourceKind<infer T extends KubeObject> ? T : KubeObject;

/**
 * Each schema compiled once into generated code (zod's `z.compile`): on valid objects it parses 3–4× faster than
 * zod's interpreter, which counts where every cached object passes through it (50,000 IPAddressClaims at each start).
 * Invalid input falls back to the interpreter, so errors read the same; a schema zod cannot compile is used as it is.
 */
const compiledSchemas = new WeakMap<z.ZodType, z.ZodType>();

export function compiledSchema<T>(schema: z.ZodType<T>): z.ZodType<T> {
  let compiled = compiledSchemas.get(schema);
  if (compiled === undefined) {
    compiled = z.compile(schema);
    compiledSchemas.set(schema, compiled);
  }
  return compiled as z.ZodType<T>;
}

/** The schema a resource's objects are parsed with where they enter: its own, or `kubeObjectSchema`; compiled. */
export function resourceSchema<R extends ResourceKind>(resource: R): z.ZodType<ObjectOf<R>> {
  const schema = 'schema' in resource ? (resource.schema as z.ZodType<unknown>) : kubeObjectSchema;
  // The schema was chosen from the resource exactly as ObjectOf<R> chooses the type.
  return compiledSchema(schema) as z.ZodType<ObjectOf<R>>;
}

/** Scalar types whose parse hands back the very value it was given (unless a check rewrites it, or it coerces). */
const SCALAR_TYPES = new Set([
  'string',
  'number',
  'boolean',
  'null',
  'literal',
  'enum',
  'template_literal',
  'unknown',
  'any',
]);
const returnsInputBySchema = new WeakMap<z.ZodType, boolean>();

/**
 * Whether a valid value parses to itself (deep-equal, up to the keys a non-loose object leaves out): no defaults,
 * transforms, pipes, coercion or rewriting checks (`trim`) anywhere in the schema. Anything not known to keep its input
 * counts as changing it. Decided once per schema.
 */
export function parsesToItsInput(schema: z.ZodType): boolean {
  let known = returnsInputBySchema.get(schema);
  if (known === undefined) {
    known = keepsInput(schema, 0);
    returnsInputBySchema.set(schema, known);
  }
  return known;
}

/** The walk behind `parsesToItsInput`; schemas nested deeper than any Kubernetes object are taken as changing. */
function keepsInput(schema: z.ZodType, depth: number): boolean {
  if (depth > 64) return false;
  const def = schema._zod.def as {
    readonly type: string;
    readonly coerce?: boolean;
    readonly checks?: readonly { readonly _zod: { readonly def: { readonly check: string } } }[];
    readonly innerType?: z.ZodType;
    readonly element?: z.ZodType;
    readonly keyType?: z.ZodType;
    readonly valueType?: z.ZodType;
    readonly shape?: Readonly<Record<string, z.ZodType>>;
    readonly catchall?: z.ZodType;
    readonly options?: readonly z.ZodType[];
  };
  if (def.coerce === true || def.checks?.some((check) => check._zod.def.check === 'overwrite')) return false;
  const inner = (child: z.ZodType | undefined): boolean => child !== undefined && keepsInput(child, depth + 1);
  switch (def.type) {
    case 'optional':
    case 'nullable':
      return inner(def.innerType);
    case 'array':
      return inner(def.element);
    case 'record':
      return inner(def.keyType) && inner(def.valueType);
    case 'object':
      // A strict object's catchall is `never`: nothing to keep or change.
      return (
        Object.values(def.shape ?? {}).every(inner) &&
        (def.catchall === undefined || def.catchall._zod.def.type === 'never' || inner(def.catchall))
      );
    case 'union':
      return (def.options ?? []).every(inner);
    default:
      return SCALAR_TYPES.has(def.type);
  }
}

/**
 * A JSON value checked against a resource's schema, without building a copy when the schema keeps its input (the
 * value itself comes back, typed): zod's `validate` runs the same compiled checks as its parse but builds nothing.
 * Otherwise, or for an invalid value, zod's parse, with its errors.
 */
export function decodeObject<T>(schema: z.ZodType<T>, raw: unknown): z.ZodSafeParseResult<T> {
  if (parsesToItsInput(schema) && z.validate(schema, raw)) return { success: true, data: raw as T };
  return schema.safeParse(raw);
}

/** Attaches a schema to a resource descriptor. */
export function typedResource<T extends KubeObject>(
  resource: ResourceKind,
  schema: z.ZodType<T>,
): TypedResourceKind<T> {
  return { ...resource, schema };
}

/**
 * An object about to be written (its other fields, such as `spec`, ride along): a name may still be generated by the
 * server. Client methods take it as a type parameter so object literals with `spec`/`status` are accepted.
 */
export interface ObjectInput {
  readonly apiVersion?: string | undefined;
  readonly kind?: string | undefined;
  readonly metadata: {
    readonly name?: string | undefined;
    readonly generateName?: string | undefined;
    readonly namespace?: string | undefined;
    readonly resourceVersion?: string | undefined;
  };
}
