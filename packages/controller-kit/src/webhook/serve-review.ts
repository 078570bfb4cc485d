import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import {
  type AdmissionDecision,
  type AdmissionRequest,
  admissionReviewRequestSchema,
  admissionReviewResponse,
} from './admission-review.js';
import { describeIssues } from './field-errors.js';
import type { WebhookMetrics } from './metrics.js';
import { lingerAndClose, RejectedRequest, tooLarge } from './read-body.js';
import type { AdmissionHandler } from './validating-handler.js';

/**
 * controller-runtime's limit (`maxRequestSize`, 7 MiB): kube-apiserver refuses request bodies over 3 MiB
 * (`MaxRequestBodyBytes`), and an UPDATE review carries two objects of up to that size plus the review envelope.
 * Anything larger is not a request the API server sends.
 */
export const MAX_REVIEW_BYTES = 7 * 1024 * 1024;

/** The API server's default webhook `timeoutSeconds` is 10 s (at most 30 s): a later answer is never read. */
export const DEFAULT_HANDLER_TIMEOUT_MS = 10_000;

/** Longest message a denial or a Status carries; longer ones are cut with an ellipsis (no megabyte echoes). */
const MAX_MESSAGE_CHARS = 1024;

/** Cuts a message to `MAX_MESSAGE_CHARS`, ending it with an ellipsis when it was longer. */
export function shortMessage(message: string): string {
  return message.length <= MAX_MESSAGE_CHARS ? message : `${message.slice(0, MAX_MESSAGE_CHARS - 1)}…`;
}

/** A message for anything thrown, even values whose `toString` throws or is missing. */
export function describeThrown(error: unknown): string {
  try {
    if (error instanceof Error) return shortMessage(error.message);
    return shortMessage(String(error));
  } catch {
    return 'a value that cannot be printed was thrown';
  }
}

/** Longest piece of a request (a path, a header) a refusal repeats: enough to recognise it, never a flood. */
const MAX_ECHOED_CHARS = 128;

/** `value` as a refusal may quote it: at most `MAX_ECHOED_CHARS`, cut with an ellipsis. */
export function echoed(value: string): string {
  return value.length <= MAX_ECHOED_CHARS ? value : `${value.slice(0, MAX_ECHOED_CHARS - 1)}…`;
}

/** The method, content type and declared length, checked before a byte of the body is read. */
function checkHeaders(request: IncomingMessage, maxBytes: number): void {
  if (request.method !== 'POST') {
    throw new RejectedRequest(
      405,
      'MethodNotAllowed',
      `method ${echoed(request.method ?? '')} is not allowed; POST an AdmissionReview`,
    );
  }
  const contentType = request.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
  if (contentType !== 'application/json') {
    throw new RejectedRequest(
      400,
      'BadRequest',
      `contentType=${contentType === undefined ? '<none>' : echoed(contentType)}, expected application/json`,
    );
  }
  // A declared length over the limit is refused before a byte of the body is read.
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(maxBytes);
}

/** Parses a complete body: JSON, then the `admission.k8s.io/v1` AdmissionReview schema. */
function parseReview(bytes: Buffer): AdmissionRequest {
  let body: unknown;
  try {
    body = JSON.parse(bytes.toString('utf8'));
  } catch (error) {
    throw new RejectedRequest(400, 'BadRequest', `request body is not valid JSON: ${describeThrown(error)}`);
  }
  let problem: string;
  try {
    const parsed = admissionReviewRequestSchema.safeParse(body);
    if (parsed.success) return parsed.data.request;
    problem = describeIssues(parsed.error, body);
  } catch (error) {
    // A pathological shape (e.g. nesting deep enough to exhaust the stack) is still only a bad request.
    problem = describeThrown(error);
  }
  throw new RejectedRequest(
    400,
    'BadRequest',
    `request body is not an admission.k8s.io/v1 AdmissionReview request: ${problem}`,
  );
}

/**
 * Answers a request refused before its body was read to the end and closes the connection once the answer is out:
 * whatever of the body is still coming is not read (at most a bounded linger's worth).
 */
export function refuseUnread(
  request: IncomingMessage,
  response: ServerResponse,
  refusal: { readonly httpStatus: number; readonly reason: string; readonly message: string },
  socket = request.socket,
): void {
  response.setHeader('connection', 'close');
  writeStatus(response, refusal.httpStatus, refusal.reason, refusal.message);
  response.once('finish', () => lingerAndClose(request, socket));
}

function writeJson(response: ServerResponse, httpStatus: number, body: unknown): void {
  const payload = JSON.stringify(body);
  response.writeHead(httpStatus, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(payload),
  });
  response.end(payload);
}

/** Writes a `metav1.Status` failure, the body shape Kubernetes clients know how to print. */
export function writeStatus(response: ServerResponse, httpStatus: number, reason: string, message: string): void {
  if (httpStatus === 429) response.setHeader('connection', 'close');
  if (httpStatus === 429) response.setHeader('retry-after', '1');
  writeJson(response, httpStatus, {
    apiVersion: 'v1',
    kind: 'Status',
    status: 'Failure',
    code: httpStatus,
    reason,
    message: shortMessage(message),
  });
}

class HandlerTimeout extends Error {
  override readonly name = 'HandlerTimeout';
}

/** The handler's answer, or its failure as a 500 denial: a throw, a non-decision or no answer within `timeoutMs`. */
async function decide(
  handler: AdmissionHandler,
  request: AdmissionRequest,
  log: Logger,
  timeoutMs: number,
): Promise<AdmissionDecision> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new HandlerTimeout(`the admission handler did not answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
  });
  try {
    const decision: unknown = await Promise.race([Promise.resolve().then(() => handler(request)), deadline]);
    if (typeof decision === 'object' && decision !== null && typeof Reflect.get(decision, 'allowed') === 'boolean') {
      return decision as AdmissionDecision;
    }
    throw new Error('the handler returned no decision (expected an object with a boolean "allowed")');
  } catch (error) {
    const message = describeThrown(error);
    log.error({ err: error instanceof Error ? error : message }, 'admission handler failed; denying the request');
    return { allowed: false, status: { code: 500, reason: 'InternalError', message } };
  } finally {
    clearTimeout(timer);
  }
}

export interface ServeReviewContext {
  readonly path: string;
  readonly handler: AdmissionHandler;
  readonly metrics: WebhookMetrics;
  readonly logger: Logger;
  /** Largest body accepted; a larger declared length is refused before the body is read. */
  readonly maxRequestBytes: number;
  /** How long the handler may take before the request is denied. */
  readonly handlerTimeoutMs: number;
  /** Receives the whole body, bounded in size and time (`readBody` with the server's budget). */
  readonly receive: (request: IncomingMessage) => Promise<Buffer>;
  /**
   * Takes one of the server's concurrency slots for the handler work, released when `response` closes; false when
   * every slot is taken. Called only once the body is in: a slow body holds a connection, never a slot.
   */
  readonly admit: (response: ServerResponse) => boolean;
  /** The slot count, for the 429 message. */
  readonly maxConcurrentRequests: number;
}

/**
 * Serves one AdmissionReview POST: check the headers, receive the body, take a slot, parse, decide, answer, with
 * metrics and one log line. Never throws: a bad, slow or untimely request is a 4xx/5xx Status with a message, a
 * failing handler a denial with its error (HTTP 200, as controller-runtime answers it).
 */
export async function serveReview(
  context: ServeReviewContext,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const { path, handler, metrics, logger } = context;
  const started = performance.now();
  // Captured now: the connection is closed through it even if the request has let go of it by the time of a refusal.
  const socket = request.socket;
  let httpStatus = 200;
  let bodyRead = false;
  let admitted = false;
  try {
    checkHeaders(request, context.maxRequestBytes);
    const bytes = await context.receive(request);
    bodyRead = true;
    if (!context.admit(response)) {
      throw new RejectedRequest(
        429,
        'TooManyRequests',
        `the webhook server is already serving ${context.maxConcurrentRequests} requests`,
      );
    }
    admitted = true;
    metrics.inFlight.inc({ webhook: path });
    const review = parseReview(bytes);
    const log = logger.child({
      webhook: path,
      uid: review.uid,
      operation: review.operation,
      kind: review.kind.group ? `${review.kind.kind}.${review.kind.group}` : review.kind.kind,
      namespace: review.namespace || undefined,
      name: review.name || undefined,
      dryRun: review.dryRun,
    });
    const decision = await decide(handler, review, log, context.handlerTimeoutMs);
    writeJson(response, httpStatus, admissionReviewResponse(review.uid, decision));
    log.info(
      {
        allowed: decision.allowed,
        code: decision.status?.code,
        warnings: decision.warnings?.length ?? 0,
        durationMs: Math.round((performance.now() - started) * 1000) / 1000,
      },
      decision.allowed ? 'admission request allowed' : 'admission request denied',
    );
  } catch (error) {
    if (error instanceof RejectedRequest) {
      httpStatus = error.httpStatus;
      logger.warn({ webhook: path, httpStatus, reason: error.message }, 'refused an admission request');
      if (bodyRead) writeStatus(response, error.httpStatus, error.reason, error.message);
      else refuseUnread(request, response, error, socket);
    } else {
      // Reading the body failed (the client went away) or writing did: nobody is left to answer, and nothing here
      // needs a person.
      httpStatus = 500;
      logger.warn({ err: error, webhook: path }, 'serving an admission request failed');
      if (!response.headersSent && !response.destroyed)
        writeStatus(response, 500, 'InternalError', describeThrown(error));
      else response.destroy();
    }
  } finally {
    if (admitted) metrics.inFlight.dec({ webhook: path });
    metrics.requests.inc({ webhook: path, code: String(httpStatus) });
    metrics.latency.observe({ webhook: path }, (performance.now() - started) / 1000);
  }
}
