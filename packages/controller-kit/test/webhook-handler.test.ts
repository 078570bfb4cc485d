import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { admissionReviewResponse } from '../src/webhook/admission-review.js';
import {
  type AdmissionOperation,
  type AdmissionRequest,
  allowed,
  denied,
  specOf,
  specUnchanged,
  validatingHandler,
} from '../src/webhook/index.js';

const poolSchema = z.object({
  metadata: z.object({ name: z.string() }),
  spec: z.object({ addresses: z.array(z.string().regex(/^\d+\.\d+\.\d+\.\d+$/, 'must be an IPv4 address')) }),
});
type Pool = z.infer<typeof poolSchema>;

function request(operation: AdmissionOperation, object?: unknown, oldObject?: unknown): AdmissionRequest {
  return {
    uid: 'uid-1',
    kind: { group: 'ipam.tally.dev', version: 'v1alpha1', kind: 'Pool' },
    resource: { group: 'ipam.tally.dev', version: 'v1alpha1', resource: 'pools' },
    name: 'p1',
    namespace: 'default',
    operation,
    userInfo: { username: 'alice' },
    object,
    oldObject,
    dryRun: false,
    options: undefined,
  };
}

const pool = (...addresses: string[]): Pool => ({ metadata: { name: 'p1' }, spec: { addresses } });

describe('allowed and denied', () => {
  it('build decisions with controller-runtime defaults', () => {
    expect(allowed()).toEqual({ allowed: true });
    expect(allowed(['overlaps pool p2'])).toEqual({ allowed: true, warnings: ['overlaps pool p2'] });
    expect(denied('no')).toEqual({ allowed: false, status: { code: 403, reason: 'Forbidden', message: 'no' } });
    expect(denied('in use', { code: 400, reason: 'BadRequest', warnings: ['w'] })).toEqual({
      allowed: false,
      status: { code: 400, reason: 'BadRequest', message: 'in use' },
      warnings: ['w'],
    });
  });

  it('wrap into a review response that echoes the uid and drops empty warnings', () => {
    expect(admissionReviewResponse('u-7', allowed(['', 'kept', ' \n ']))).toEqual({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: 'u-7', allowed: true, warnings: ['kept'] },
    });
    expect(admissionReviewResponse('u-8', denied('no')).response).toEqual({
      uid: 'u-8',
      allowed: false,
      status: { code: 403, reason: 'Forbidden', message: 'no' },
    });
  });

  it('turns control characters in warnings into spaces, since the API server drops such warnings', () => {
    expect(
      admissionReviewResponse('u-9', allowed(['overlaps:\n\t10.0.0.0/24 (pool p2)\u007f'])).response.warnings,
    ).toEqual(['overlaps: 10.0.0.0/24 (pool p2)']);
  });
});

describe('specUnchanged', () => {
  const pool = (addresses: string[], labels: Record<string, string> = {}): unknown => ({
    metadata: { name: 'p', labels },
    spec: { addresses },
  });

  it('is true for an update that changes only metadata, and false when the spec changed', () => {
    expect(specUnchanged({ object: pool(['10.0.0.1'], { a: 'b' }), oldObject: pool(['10.0.0.1']) })).toBe(true);
    expect(specUnchanged({ object: pool(['10.0.0.2']), oldObject: pool(['10.0.0.1']) })).toBe(false);
    expect(specOf(pool(['10.0.0.1']))).toEqual({ addresses: ['10.0.0.1'] });
  });

  it('is false without an old object (a create) and for objects that are not objects', () => {
    expect(specUnchanged({ object: pool(['10.0.0.1']), oldObject: undefined })).toBe(false);
    expect(specOf('text')).toBeUndefined();
    expect(specOf(null)).toBeUndefined();
  });

  it('is false, not a crash, for specs too deep to compare', () => {
    const deep = (): unknown => {
      let value: unknown = 'leaf';
      for (let depth = 0; depth < 100_000; depth += 1) value = { value };
      return { spec: value };
    };
    expect(specUnchanged({ object: deep(), oldObject: deep() })).toBe(false);
  });
});

describe('validatingHandler', () => {
  const calls: string[] = [];
  const handler = validatingHandler<Pool>({
    parse: poolSchema,
    create: (object) => {
      calls.push(`create ${object.spec.addresses.join(',')}`);
      return allowed();
    },
    update: (object, oldObject) => {
      const dropped = oldObject.spec.addresses.filter((address) => !object.spec.addresses.includes(address));
      return dropped.length > 0
        ? denied(`pool addresses do not contain allocated addresses: [${dropped.join(' ')}]`, { code: 400 })
        : allowed();
    },
    delete: (oldObject) => denied(`pool ${oldObject.metadata.name} has addresses allocated`),
  });

  it('dispatches CREATE with the parsed object', async () => {
    calls.length = 0;
    expect(await handler(request('CREATE', pool('10.0.0.1')))).toEqual({ allowed: true });
    expect(calls).toEqual(['create 10.0.0.1']);
  });

  it('dispatches UPDATE with the new and the old object', async () => {
    const decision = await handler(request('UPDATE', pool('10.0.0.1'), pool('10.0.0.1', '10.0.0.2')));
    expect(decision).toEqual(denied('pool addresses do not contain allocated addresses: [10.0.0.2]', { code: 400 }));
  });

  it('dispatches DELETE with the old object', async () => {
    expect(await handler(request('DELETE', undefined, pool('10.0.0.1')))).toEqual(
      denied('pool p1 has addresses allocated'),
    );
  });

  it('allows CONNECT and operations without a function', async () => {
    expect(await handler(request('CONNECT'))).toEqual({ allowed: true });
    const createOnly = validatingHandler<Pool>({ parse: poolSchema, create: () => denied('no') });
    expect(await createOnly(request('UPDATE', pool(), pool()))).toEqual({ allowed: true });
    expect(await createOnly(request('DELETE', undefined, pool()))).toEqual({ allowed: true });
  });

  it('denies an object that does not parse with the field path and the value', async () => {
    const decision = await handler(
      request('CREATE', { metadata: { name: 'p1' }, spec: { addresses: ['10.0.0.1', 'ten'] } }),
    );
    expect(decision).toEqual({
      allowed: false,
      status: {
        code: 422,
        reason: 'Invalid',
        message:
          'Pool.ipam.tally.dev "p1" is invalid: spec.addresses[1]: Invalid value: "ten": must be an IPv4 address',
      },
    });
  });

  it('reports a missing field as a required value, and every problem', async () => {
    const decision = await handler(request('CREATE', { metadata: {}, spec: { addresses: [1] } }));
    expect(decision.status?.message).toBe(
      'Pool.ipam.tally.dev "p1" is invalid: metadata.name: Required value: Invalid input: expected string, received undefined; ' +
        'spec.addresses[0]: Invalid value: 1: Invalid input: expected string, received number',
    );
  });

  it('says when the stored object no longer parses', async () => {
    const decision = await handler(request('UPDATE', pool('10.0.0.1'), { metadata: { name: 'p1' }, spec: {} }));
    expect(decision.status?.message).toBe(
      'Pool.ipam.tally.dev "p1" is invalid: the existing object no longer parses: spec.addresses: Required value: Invalid input: expected array, received undefined',
    );
  });

  it('denies a request that lacks the object the operation needs', async () => {
    expect(await handler(request('DELETE'))).toEqual(
      denied('DELETE request for Pool.ipam.tally.dev "p1" carries no oldObject', { code: 400, reason: 'BadRequest' }),
    );
  });
});
