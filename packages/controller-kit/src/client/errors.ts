import { ApiException } from '@kubernetes/client-node';
import { z } from 'zod';

/** What a failed request was about: the verb, the resource and (when known) the object. */
export interface RequestTarget {
  readonly verb: string;
  /** Kind or plural of the resource, for the message. */
  readonly resource: string;
  readonly namespace?: string | undefined;
  readonly name?: string | undefined;
  /** Subresource such as `status`, when the request went to one. */
  readonly subresource?: string | undefined;
}

/** The `metav1.Status` the API server sends with a failure; only what the kit reads is spelled out. */
const statusCauseSchema = z.looseObject({
  reason: z.string().optional(),
  message: z.string().optional(),
  field: z.string().optional(),
});

const statusSchema = z.looseObject({
  kind: z.string().optional(),
  status: z.string().optional(),
  message: z.string().optional(),
  reason: z.string().optional(),
  code: z.number().optional(),
  details: z
    .looseObject({
      name: z.string().optional(),
      group: z.string().optional(),
      kind: z.string().optional(),
      causes: z.array(statusCauseSchema).optional(),
      retryAfterSeconds: z.number().optional(),
    })
    .optional(),
});

export type StatusCause = z.infer<typeof statusCauseSchema>;

/**
 * A non-2xx answer of the API server. `reason` is the server's machine-readable reason (`NotFound`, `Conflict`,
 * `AlreadyExists`, `Invalid`, `Expired`, ...); `serverMessage` is its human-readable message, unchanged.
 */
export class KubeApiError extends Error {
  override readonly name = 'KubeApiError';
  readonly statusCode: number;
  readonly reason: string;
  readonly serverMessage: string;
  readonly causes: readonly StatusCause[];
  readonly target: RequestTarget | undefined;
  /** How long the server asked the client to wait (the `Retry-After` header, else the Status' details), if it did. */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    statusCode: number,
    body: unknown,
    target?: RequestTarget,
    options?: ErrorOptions & { readonly retryAfterSeconds?: number | undefined },
  ) {
    const status = parseStatusBody(body);
    const reason = status.reason ?? reasonForStatusCode(statusCode);
    const serverMessage = status.message ?? (typeof body === 'string' && body.length > 0 ? body : 'no message');
    super(`${describeTarget(target)}: ${statusCode} ${reason}: ${serverMessage}`, options);
    this.statusCode = statusCode;
    this.reason = reason;
    this.serverMessage = serverMessage;
    this.causes = status.details?.causes ?? [];
    this.target = target;
    this.retryAfterSeconds = options?.retryAfterSeconds ?? status.details?.retryAfterSeconds;
  }
}

/** A request that never got an answer (connection refused, TLS failure, timeout, abort). */
export class KubeRequestError extends Error {
  override readonly name = 'KubeRequestError';
  readonly target: RequestTarget | undefined;

  constructor(target: RequestTarget | undefined, cause: unknown) {
    const detail = cause instanceof Error ? cause.message : String(cause);
    super(`${describeTarget(target)}: request failed: ${detail}`, { cause });
    this.target = target;
  }
}

/**
 * The `KubeApiError` behind an error from this kit's client or from a generated client-node API (`ApiException`,
 * whose `body` is the raw JSON string of the Status); undefined for anything else.
 */
export function asKubeApiError(error: unknown, target?: RequestTarget): KubeApiError | undefined {
  if (error instanceof KubeApiError) return error;
  if (error instanceof ApiException) {
    const code: unknown = error.code;
    if (typeof code === 'number') return new KubeApiError(code, error.body, target, { cause: error });
  }
  return undefined;
}

export function isNotFound(error: unknown): boolean {
  return asKubeApiError(error)?.statusCode === 404;
}

/** 409 from a stale resourceVersion (optimistic concurrency) or an SSA field conflict — not AlreadyExists. */
export function isConflict(error: unknown): boolean {
  const apiError = asKubeApiError(error);
  return apiError?.statusCode === 409 && apiError.reason !== 'AlreadyExists';
}

/**
 * A 409 Conflict from a stale `metadata.resourceVersion`: another writer got there first (optimistic concurrency).
 * Reading again and retrying is the whole answer. Excludes server-side apply field-manager conflicts, which persist
 * until someone changes ownership, and AlreadyExists.
 */
export function isStaleResourceVersionConflict(error: unknown): boolean {
  return isConflict(error) && !asKubeApiError(error)?.causes.some((cause) => cause.reason === 'FieldManagerConflict');
}

/** 409 AlreadyExists: a create lost to an object of the same name. */
export function isAlreadyExists(error: unknown): boolean {
  const apiError = asKubeApiError(error);
  return apiError?.statusCode === 409 && apiError.reason === 'AlreadyExists';
}

/** 422 Invalid: the object failed validation (schema, CEL, immutable fields). */
export function isInvalid(error: unknown): boolean {
  return asKubeApiError(error)?.statusCode === 422;
}

/** 410 Gone / Expired: a resourceVersion or continue token too old for the server. */
export function isGone(error: unknown): boolean {
  return asKubeApiError(error)?.statusCode === 410;
}

/**
 * The delay-seconds form of a `Retry-After` header (the only form kube-apiserver sends); undefined when absent or an
 * HTTP date.
 */
export function parseRetryAfterHeader(value: string | string[] | undefined): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || !/^\d+$/.test(text.trim())) return undefined;
  return Number(text.trim());
}

function parseStatusBody(body: unknown): z.infer<typeof statusSchema> {
  let value = body;
  if (typeof body === 'string') {
    try {
      value = JSON.parse(body);
    } catch {
      return {};
    }
  }
  const parsed = statusSchema.safeParse(value);
  return parsed.success ? parsed.data : {};
}

function reasonForStatusCode(statusCode: number): string {
  switch (statusCode) {
    case 400:
      return 'BadRequest';
    case 401:
      return 'Unauthorized';
    case 403:
      return 'Forbidden';
    case 404:
      return 'NotFound';
    case 405:
      return 'MethodNotAllowed';
    case 409:
      return 'Conflict';
    case 410:
      return 'Expired';
    case 415:
      return 'UnsupportedMediaType';
    case 422:
      return 'Invalid';
    case 429:
      return 'TooManyRequests';
    case 500:
      return 'InternalError';
    case 503:
      return 'ServiceUnavailable';
    case 504:
      return 'Timeout';
    default:
      return 'Unknown';
  }
}

function describeTarget(target: RequestTarget | undefined): string {
  if (!target) return 'Kubernetes API request';
  const key = target.name ? ` ${target.namespace ? `${target.namespace}/` : ''}${target.name}` : '';
  const scope = !target.name && target.namespace ? ` in namespace ${target.namespace}` : '';
  const subresource = target.subresource ? ` (${target.subresource})` : '';
  return `${target.verb} ${target.resource}${key}${subresource}${scope}`;
}
