import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  compiledSchema,
  decodeObject,
  kubeObjectSchema,
  objectMetaSchema,
  parsesToItsInput,
} from '../src/client/object-schema.js';

/** A schema with what the project's API types use: loose and stripping objects, patterns, bounds, enums, records. */
const conditionSchema = z.object({
  type: z
    .string()
    .min(1)
    .max(316)
    .regex(/^[A-Za-z0-9][-A-Za-z0-9_.]*$/),
  status: z.enum(['True', 'False', 'Unknown']),
  observedGeneration: z.int().min(0).optional(),
  lastTransitionTime: z.iso.datetime({ offset: true }),
  reason: z.string().min(1).max(1024),
  message: z.string().max(32768),
});
const claimLikeSchema = z.looseObject({
  apiVersion: z.literal('example.tally.dev/v1'),
  kind: z.literal('Thing'),
  metadata: objectMetaSchema,
  spec: z.looseObject({
    poolRef: z.looseObject({ name: z.string().min(1).max(253), kind: z.string().regex(/^[A-Z][A-Za-z]*$/) }),
    prefix: z.int().min(0).max(128).optional(),
    labels: z.record(z.string(), z.string()).optional(),
  }),
  status: z.looseObject({ conditions: z.array(conditionSchema).max(32).optional() }).optional(),
});

const valid = {
  apiVersion: 'example.tally.dev/v1',
  kind: 'Thing',
  metadata: {
    name: 'thing-1',
    namespace: 'default',
    uid: '0b6c1d2e-0000-4000-8000-000000000001',
    resourceVersion: '42',
    generation: 3,
    ownerReferences: [{ apiVersion: 'v1', kind: 'Pool', name: 'p', uid: 'u', controller: true, extra: 1 }],
    finalizers: ['example.tally.dev/release'],
    managedFields: [{ manager: 'm', operation: 'Update' }],
    labels: { a: 'b' },
  },
  spec: { poolRef: { name: 'pool', kind: 'Pool', apiGroup: 'x' }, prefix: 24, unknownField: [1, { deep: true }] },
  status: {
    conditions: [
      {
        type: 'Ready',
        status: 'True',
        lastTransitionTime: '2026-11-25T10:00:00Z',
        reason: 'Allocated',
        message: 'ok',
        notInTheSchema: 'stripped by z.object',
      },
    ],
  },
};

/** Paths into `valid` whose values a test replaces, so both valid and invalid variants come out. */
const paths: readonly (readonly (string | number)[])[] = [
  ['apiVersion'],
  ['kind'],
  ['metadata'],
  ['metadata', 'name'],
  ['metadata', 'generation'],
  ['metadata', 'ownerReferences'],
  ['metadata', 'ownerReferences', 0, 'uid'],
  ['metadata', 'ownerReferences', 0, 'controller'],
  ['metadata', 'finalizers', 0],
  ['metadata', 'labels'],
  ['spec', 'poolRef', 'kind'],
  ['spec', 'prefix'],
  ['spec', 'labels'],
  ['status'],
  ['status', 'conditions', 0, 'status'],
  ['status', 'conditions', 0, 'lastTransitionTime'],
  ['status', 'conditions', 0, 'observedGeneration'],
];

function withValueAt(object: unknown, path: readonly (string | number)[], value: unknown): unknown {
  const copy = structuredClone(object) as Record<string | number, unknown>;
  let at = copy;
  for (const step of path.slice(0, -1)) at = at[step] as Record<string | number, unknown>;
  const last = path[path.length - 1] as string | number;
  if (value === undefined) delete at[last];
  else at[last] = value;
  return copy;
}

const replacement = fc.oneof(
  fc.constant(undefined),
  fc.constantFrom('Thing', 'Pool', 'True', 'Maybe', '', 'pool', '2026-11-25T10:00:00Z', 'not a time', -1, 0, 24, 129),
  fc.jsonValue({ maxDepth: 2 }),
);

describe('compiledSchema', () => {
  for (const [name, schema] of [
    ['kubeObjectSchema', kubeObjectSchema],
    ['a schema with patterns, bounds and stripping objects', claimLikeSchema],
  ] as const) {
    it(`parses exactly as the interpreter does, and fails with the same errors: ${name}`, () => {
      const compiled = compiledSchema(schema as z.ZodType<unknown>);
      expect(compiled).not.toBe(schema);
      expect(compiledSchema(schema as z.ZodType<unknown>)).toBe(compiled);
      fc.assert(
        fc.property(fc.array(fc.tuple(fc.constantFrom(...paths), replacement), { maxLength: 3 }), (changes) => {
          let input: unknown = valid;
          for (const [path, value] of changes) {
            try {
              input = withValueAt(input, path, value);
            } catch {
              // An earlier change removed the parent: this change has nowhere to go.
            }
          }
          const expected = schema.safeParse(input);
          const actual = compiled.safeParse(input);
          expect(actual.success).toBe(expected.success);
          if (expected.success && actual.success) {
            expect(actual.data).toEqual(expected.data);
            // Like the interpreter, the compiled parser hands back a new object, never its input.
            expect(actual.data).not.toBe(input);
          } else if (!expected.success && !actual.success) {
            expect(z.prettifyError(actual.error)).toBe(z.prettifyError(expected.error));
          }
        }),
      );
    });
  }

  it('keeps loose fields and strips what a stripping object does not declare', () => {
    const parsed = compiledSchema(claimLikeSchema).parse(valid);
    expect(parsed.spec).toHaveProperty('unknownField', [1, { deep: true }]);
    expect(parsed.status?.conditions?.[0]).not.toHaveProperty('notInTheSchema');
    expect(parsed.metadata.ownerReferences?.[0]).toHaveProperty('extra', 1);
  });
});

describe('parsesToItsInput', () => {
  it('holds for schemas of checks only: loose, strict and stripping objects, arrays, records, unions, bounds, formats', () => {
    for (const schema of [
      kubeObjectSchema,
      claimLikeSchema,
      compiledSchema(claimLikeSchema),
      z.strictObject({ a: z.string().regex(/^a/) }),
      z.union([z.literal('a'), z.int().min(0), z.null()]),
      z.record(z.string(), z.array(z.iso.datetime()).nullable()),
    ]) {
      expect(parsesToItsInput(schema)).toBe(true);
    }
  });

  it('fails for anything that may give back another value than it was given', () => {
    for (const schema of [
      z.looseObject({ a: z.string().default('x') }),
      z.looseObject({ a: z.string().trim() }),
      z.array(z.string().toLowerCase()),
      z.looseObject({ n: z.coerce.number() }),
      z.string().transform((text) => text.length),
      z.string().pipe(z.string()),
      z.looseObject({ a: z.string().catch('x') }),
      z.looseObject({ a: z.string() }).readonly(),
      z.intersection(z.looseObject({ a: z.string() }), z.looseObject({ b: z.string() })),
      z.lazy(() => z.string()),
      z.looseObject({ deep: z.union([z.string(), z.string().prefault('x')]) }),
    ]) {
      expect(parsesToItsInput(schema)).toBe(false);
    }
  });
});

describe('decodeObject', () => {
  /** zod's output for `valid`-like input: the input without the condition field the stripping object leaves out. */
  function withoutUndeclared(input: unknown): unknown {
    const copy = structuredClone(input) as { status?: { conditions?: unknown[] } };
    const condition = copy?.status?.conditions?.[0];
    if (condition !== null && typeof condition === 'object')
      delete (condition as Record<string, unknown>).notInTheSchema;
    return copy;
  }

  it('hands back the value itself where zod accepts it, and the errors of zod where it does not', () => {
    const schema = compiledSchema(claimLikeSchema);
    fc.assert(
      fc.property(fc.constantFrom(...paths), replacement, (path, value) => {
        const input = withValueAt(valid, path, value);
        const parsed = schema.safeParse(input);
        const decoded = decodeObject(schema, input);
        expect(decoded.success).toBe(parsed.success);
        if (decoded.success && parsed.success) {
          expect(decoded.data).toBe(input);
          expect(parsed.data).toStrictEqual(withoutUndeclared(input));
        } else {
          expect(decoded.error?.issues).toEqual(parsed.error?.issues);
        }
      }),
    );
  });

  it('gives the output of zod for a schema with defaults', () => {
    const schema = compiledSchema(
      z.looseObject({ metadata: objectMetaSchema, spec: z.looseObject({ a: z.string().default('x') }) }),
    );
    const input = { metadata: { name: 'n' }, spec: {} };
    const decoded = decodeObject(schema, input);
    expect(decoded.success && decoded.data).toStrictEqual({ metadata: { name: 'n' }, spec: { a: 'x' } });
    expect(input.spec).toStrictEqual({});
  });
});
