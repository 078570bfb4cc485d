import type { z } from 'zod';
import { type AdmissionDecision, type AdmissionRequest, allowed, denied } from './admission-review.js';
import { describeIssues } from './field-errors.js';

/** Answers one admission request. May throw: the server turns a throw into a 500 denial, never a crash. */
export type AdmissionHandler = (request: AdmissionRequest) => AdmissionDecision | Promise<AdmissionDecision>;

type Decision = AdmissionDecision | Promise<AdmissionDecision>;

export interface ValidatingHandlerOptions<T> {
  /** Parses `object`/`oldObject`; objects it rejects are denied (422 Invalid) with each field path and value. */
  readonly parse: z.ZodType<T>;
  /** A missing function allows that operation (CONNECT is always allowed). */
  readonly create?: (object: T, request: AdmissionRequest) => Decision;
  readonly update?: (object: T, oldObject: T, request: AdmissionRequest) => Decision;
  /** Receives the object as it was before the delete (the request's `oldObject`). */
  readonly delete?: (oldObject: T, request: AdmissionRequest) => Decision;
}

type Parsed<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly decision: AdmissionDecision };

function describeObject(request: AdmissionRequest): string {
  const name = request.name ? ` "${request.name}"` : '';
  return `${request.kind.kind}${request.kind.group ? `.${request.kind.group}` : ''}${name}`;
}

function parseObject<T>(
  schema: z.ZodType<T>,
  value: unknown,
  field: 'object' | 'oldObject',
  request: AdmissionRequest,
): Parsed<T> {
  if (value === undefined) {
    return {
      ok: false,
      decision: denied(`${request.operation} request for ${describeObject(request)} carries no ${field}`, {
        code: 400,
        reason: 'BadRequest',
      }),
    };
  }
  const result = schema.safeParse(value);
  if (result.success) return { ok: true, value: result.data };
  // The old object was accepted once; failing to parse it means the schema changed, which the message should say.
  const prefix = field === 'oldObject' ? 'the existing object no longer parses: ' : '';
  return {
    ok: false,
    decision: denied(`${describeObject(request)} is invalid: ${prefix}${describeIssues(result.error, value)}`, {
      code: 422,
      reason: 'Invalid',
    }),
  };
}

/**
 * A typed validating handler (controller-runtime's `CustomValidator`): parses the objects with a zod schema and
 * dispatches by operation, so rule code works on `T` rather than on raw JSON.
 */
export function validatingHandler<T>(options: ValidatingHandlerOptions<T>): AdmissionHandler {
  return async (request) => {
    switch (request.operation) {
      case 'CREATE': {
        if (!options.create) return allowed();
        const object = parseObject(options.parse, request.object, 'object', request);
        return object.ok ? options.create(object.value, request) : object.decision;
      }
      case 'UPDATE': {
        if (!options.update) return allowed();
        const object = parseObject(options.parse, request.object, 'object', request);
        if (!object.ok) return object.decision;
        const oldObject = parseObject(options.parse, request.oldObject, 'oldObject', request);
        return oldObject.ok ? options.update(object.value, oldObject.value, request) : oldObject.decision;
      }
      case 'DELETE': {
        if (!options.delete) return allowed();
        const oldObject = parseObject(options.parse, request.oldObject, 'oldObject', request);
        return oldObject.ok ? options.delete(oldObject.value, request) : oldObject.decision;
      }
      case 'CONNECT':
        return allowed();
    }
  };
}
