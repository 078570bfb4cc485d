import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';

/**
 * The `admission.k8s.io/v1` AdmissionReview wire format, as the API server POSTs it to a webhook. Only v1 is accepted:
 * the configurations this kit builds declare `admissionReviewVersions: ["v1"]`, so anything else is a caller error.
 */
export const ADMISSION_API_VERSION = 'admission.k8s.io/v1';

export const admissionOperations = ['CREATE', 'UPDATE', 'DELETE', 'CONNECT'] as const;
export type AdmissionOperation = (typeof admissionOperations)[number];

// The core group is the empty string; the API server always sends it, but a missing one means the same thing.
const groupVersionKindSchema = z.object({
  group: z.string().default(''),
  version: z.string(),
  kind: z.string(),
});

const groupVersionResourceSchema = z.object({
  group: z.string().default(''),
  version: z.string(),
  resource: z.string(),
});

const userInfoSchema = z.object({
  username: z.string().optional(),
  uid: z.string().optional(),
  groups: z.array(z.string()).optional(),
  extra: z.record(z.string(), z.array(z.string())).optional(),
});

/** A RawExtension: any JSON value; the API server sends `null` for "no object" (e.g. `object` of a DELETE). */
const rawObjectSchema = z
  .unknown()
  .optional()
  .transform((value): unknown => (value === null ? undefined : value));

const admissionRequestSchema = z.object({
  uid: z.string().min(1, 'must be a non-empty string'),
  kind: groupVersionKindSchema,
  resource: groupVersionResourceSchema,
  subResource: z.string().optional(),
  requestKind: groupVersionKindSchema.optional(),
  requestResource: groupVersionResourceSchema.optional(),
  requestSubResource: z.string().optional(),
  // Empty on a CREATE that uses generateName: the server has not picked the name yet.
  name: z.string().optional(),
  namespace: z.string().optional(),
  operation: z.enum(admissionOperations),
  userInfo: userInfoSchema,
  object: rawObjectSchema,
  oldObject: rawObjectSchema,
  dryRun: z.boolean().default(false),
  options: rawObjectSchema,
});

export const admissionReviewRequestSchema = z.object({
  apiVersion: z.literal(ADMISSION_API_VERSION),
  kind: z.literal('AdmissionReview'),
  request: admissionRequestSchema,
});

export type AdmissionGroupVersionKind = z.output<typeof groupVersionKindSchema>;
export type AdmissionGroupVersionResource = z.output<typeof groupVersionResourceSchema>;
export type AdmissionUserInfo = z.output<typeof userInfoSchema>;
/** The typed request a handler receives: `object` is absent on DELETE, `oldObject` on CREATE and CONNECT. */
export type AdmissionRequest = z.output<typeof admissionRequestSchema>;

/** The `metav1.Status` of a denial; the API server shows `message` to the user, prefixed with the webhook's name. */
export interface AdmissionStatus {
  readonly code: number;
  readonly reason?: string | undefined;
  readonly message: string;
}

/** What a handler decides. `warnings` reach the client as HTTP `Warning` headers whether or not the request is allowed. */
export interface AdmissionDecision {
  readonly allowed: boolean;
  readonly status?: AdmissionStatus | undefined;
  readonly warnings?: readonly string[] | undefined;
}

export interface AdmissionReviewResponse {
  readonly apiVersion: typeof ADMISSION_API_VERSION;
  readonly kind: 'AdmissionReview';
  readonly response: {
    readonly uid: string;
    readonly allowed: boolean;
    readonly status?: AdmissionStatus;
    readonly warnings?: string[];
  };
}

// The API server silently drops a warning that contains a control character (tab, newline, DEL, C1), so a multi-line
// warning would never reach the user; runs of them become one space instead. Empty warnings are dropped.
const CONTROL_CHARACTERS = /\p{Cc}+/gu;

function sanitizeWarnings(warnings: readonly string[] | undefined): string[] {
  return (warnings ?? [])
    .map((warning) => warning.replace(CONTROL_CHARACTERS, ' ').trim())
    .filter((warning) => warning.length > 0);
}

/** Wraps a decision into the review the API server expects; the `uid` must echo the request's. */
export function admissionReviewResponse(uid: string, decision: AdmissionDecision): AdmissionReviewResponse {
  const warnings = sanitizeWarnings(decision.warnings);
  return {
    apiVersion: ADMISSION_API_VERSION,
    kind: 'AdmissionReview',
    response: {
      uid,
      allowed: decision.allowed,
      ...(decision.status ? { status: { ...decision.status } } : {}),
      ...(warnings.length > 0 ? { warnings } : {}),
    },
  };
}

/** Allows the request, optionally with warnings for the user (keep each under ~120 characters, as the API advises). */
export function allowed(warnings: readonly string[] = []): AdmissionDecision {
  return warnings.length > 0 ? { allowed: true, warnings } : { allowed: true };
}

export interface DeniedOptions {
  /** HTTP-style code the API server returns to the client; defaults to 403 as controller-runtime's `Denied`. */
  readonly code?: number;
  /** Machine-readable reason (`Forbidden`, `BadRequest`, `Invalid`, ...); defaults to `Forbidden`. */
  readonly reason?: string;
  readonly warnings?: readonly string[];
}

/** Denies the request with a message the user sees after `admission webhook "<name>" denied the request: `. */
export function denied(message: string, options: DeniedOptions = {}): AdmissionDecision {
  return {
    allowed: false,
    status: { code: options.code ?? 403, reason: options.reason ?? 'Forbidden', message },
    ...(options.warnings && options.warnings.length > 0 ? { warnings: options.warnings } : {}),
  };
}

/** The `spec` of an object as the review carries it (raw JSON), or undefined when it has none. */
export function specOf(object: unknown): unknown {
  return typeof object === 'object' && object !== null ? (object as { spec?: unknown }).spec : undefined;
}

/**
 * True when an UPDATE leaves the spec as it was (a metadata or status write): validating webhooks that judge only the
 * spec let those through unread. False when there is no old object, and when the specs are too deep to compare.
 */
export function specUnchanged(request: Pick<AdmissionRequest, 'object' | 'oldObject'>): boolean {
  if (request.oldObject === undefined) return false;
  try {
    return isDeepStrictEqual(specOf(request.object), specOf(request.oldObject));
  } catch {
    return false;
  }
}
