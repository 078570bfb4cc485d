import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
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

/** A request the server refuses before any handler runs: answered with this HTTP status and a Status body. */
class RejectedRequest extends Error {
  override readonly name = 'RejectedRequest';
  constructor(
    readonly httpStatus: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

function tooLarge(maxBytes: number): RejectedRequest {
  return new RejectedRequest(413, 'RequestEntityTooLarge', `request body exceeds ${maxBytes} bytes`);
}

/**
 * Reads the body, refusing it as soon as it passes `maxBytes`, so at most that much is ever held. On refusal the
 * request is paused, not destroyed: the 413 still has to go out on its socket.
 */
function readBody(request: IncomingMessage, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = (): void => {
      request.off('data', onData);
      request.off('end', onEnd);
      request.off('error', onError);
      request.off('aborted', onAborted);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > maxBytes) {
        cleanup();
        request.pause();
        reject(tooLarge(maxBytes));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      resolve(Buffer.concat(chunks));
    };
    const onError = (error: Error): void => {
      cleanup();
      reject(error);
    };
    const onAborted = (): void => onError(new Error('the client closed the connection before the body was complete'));
    request.on('data', onData);
    request.once('end', onEnd);
    request.once('error', onError);
    request.once('aborted', onAborted);
  });
}

async function parseReview(request: IncomingMessage, maxBytes: number): Promise<AdmissionRequest> {
  if (request.method !== 'POST') {
    throw new RejectedRequest(
      405,
      'MethodNotAllowed',
      `method ${request.method} is not allowed; POST an AdmissionReview`,
    );
  }
  const contentType = request.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
  if (contentType !== 'application/json') {
    throw new RejectedRequest(400, 'BadRequest', `contentType=${contentType ?? '<none>'}, expected application/json`);
  }
  // A declared length over the limit is refused before a byte of the body is read.
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) throw tooLarge(maxBytes);
  const text = (await readBody(request, maxBytes)).toString('utf8');
  let body: unknown;
  try {
    body = JSON.parse(text);
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

/** Go's net/http figures for closing after an unread body: discard at most 256 KiB during at most 500 ms. */
const LINGER_BYTES = 256 * 1024;
const LINGER_MS = 500;

/**
 * Ends a connection whose request body was refused. Destroying it outright while body bytes sit unread makes the
 * kernel answer with a reset, and the client may lose the 413 it has not read yet; so the write side is closed first
 * and a bounded amount of the rest is read and dropped, as Go's server does, then the socket is destroyed.
 */
function lingerAndClose(request: IncomingMessage, socket: Socket | null): void {
  if (!socket || socket.destroyed) return;
  let discarded = 0;
  const close = (): void => {
    clearTimeout(timer);
    socket.destroy();
  };
  const timer = setTimeout(close, LINGER_MS);
  socket.end();
  request.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > LINGER_BYTES) close();
  });
  request.resume();
  socket.once('close', () => clearTimeout(timer));
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
  if (httpStatus === 413 || httpStatus === 429) response.setHeader('connection', 'close');
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
  /** Largest body read (default `MAX_REVIEW_BYTES`). */
  readonly maxRequestBytes?: number;
  /** How long the handler may take before the request is denied (default `DEFAULT_HANDLER_TIMEOUT_MS`). */
  readonly handlerTimeoutMs?: number;
}

/**
 * Serves one AdmissionReview POST: parse, decide, answer, with metrics and one log line. Never throws: a bad request
 * is a 4xx with a message, a failing handler a denial with its error (HTTP 200, as controller-runtime answers it).
 */
export async function serveReview(
  context: ServeReviewContext,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const { path, handler, metrics, logger } = context;
  const started = performance.now();
  // Captured now: a body iteration that throws detaches the socket from the request.
  const socket = request.socket;
  metrics.inFlight.inc({ webhook: path });
  let httpStatus = 200;
  try {
    const review = await parseReview(request, context.maxRequestBytes ?? MAX_REVIEW_BYTES);
    const log = logger.child({
      webhook: path,
      uid: review.uid,
      operation: review.operation,
      kind: review.kind.group ? `${review.kind.kind}.${review.kind.group}` : review.kind.kind,
      namespace: review.namespace || undefined,
      name: review.name || undefined,
      dryRun: review.dryRun,
    });
    const decision = await decide(handler, review, log, context.handlerTimeoutMs ?? DEFAULT_HANDLER_TIMEOUT_MS);
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
      logger.warn({ webhook: path, httpStatus, reason: error.message }, 'rejected a malformed admission request');
      writeStatus(response, error.httpStatus, error.reason, error.message);
      // Whatever of the body is still coming is not read: the connection ends once the answer is out.
      if (error.httpStatus === 413) response.once('finish', () => lingerAndClose(request, socket));
    } else {
      // Reading the body failed (the client went away or was cut off by a timeout) or writing did: nobody is left
      // to answer, and nothing here needs a person.
      httpStatus = 500;
      logger.warn({ err: error, webhook: path }, 'serving an admission request failed');
      if (!response.headersSent && !response.destroyed)
        writeStatus(response, 500, 'InternalError', describeThrown(error));
      else response.destroy();
    }
  } finally {
    metrics.inFlight.dec({ webhook: path });
    metrics.requests.inc({ webhook: path, code: String(httpStatus) });
    metrics.latency.observe({ webhook: path }, (performance.now() - started) / 1000);
  }
}
