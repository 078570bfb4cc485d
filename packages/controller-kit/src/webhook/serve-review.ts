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
import type { AdmissionHandler } from './validating-handler.js';

/**
 * controller-runtime's limit: an object may be up to ~3 MiB in etcd and an UPDATE carries two of them plus the review
 * envelope. Anything larger is not a request the API server sends.
 */
export const MAX_REVIEW_BYTES = 7 * 1024 * 1024;

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

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > MAX_REVIEW_BYTES) {
      throw new RejectedRequest(413, 'RequestEntityTooLarge', `request body exceeds ${MAX_REVIEW_BYTES} bytes`);
    }
    chunks.push(buffer);
  }
  return Buffer.concat(chunks);
}

async function parseReview(request: IncomingMessage): Promise<AdmissionRequest> {
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
  const text = (await readBody(request)).toString('utf8');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw new RejectedRequest(400, 'BadRequest', `request body is not valid JSON: ${detail}`);
  }
  const parsed = admissionReviewRequestSchema.safeParse(body);
  if (!parsed.success) {
    throw new RejectedRequest(
      400,
      'BadRequest',
      `request body is not an admission.k8s.io/v1 AdmissionReview request: ${describeIssues(parsed.error, body)}`,
    );
  }
  return parsed.data.request;
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
  if (httpStatus === 413) response.setHeader('connection', 'close');
  writeJson(response, httpStatus, {
    apiVersion: 'v1',
    kind: 'Status',
    status: 'Failure',
    code: httpStatus,
    reason,
    message,
  });
}

async function decide(handler: AdmissionHandler, request: AdmissionRequest, log: Logger): Promise<AdmissionDecision> {
  try {
    const decision: unknown = await handler(request);
    if (typeof decision === 'object' && decision !== null && typeof Reflect.get(decision, 'allowed') === 'boolean') {
      return decision as AdmissionDecision;
    }
    throw new Error('the handler returned no decision (expected an object with a boolean "allowed")');
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    log.error({ err: error }, 'admission handler failed; denying the request');
    return { allowed: false, status: { code: 500, reason: 'InternalError', message } };
  }
}

export interface ServeReviewContext {
  readonly path: string;
  readonly handler: AdmissionHandler;
  readonly metrics: WebhookMetrics;
  readonly logger: Logger;
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
  metrics.inFlight.inc({ webhook: path });
  let httpStatus = 200;
  try {
    const review = await parseReview(request);
    const log = logger.child({
      webhook: path,
      uid: review.uid,
      operation: review.operation,
      kind: review.kind.group ? `${review.kind.kind}.${review.kind.group}` : review.kind.kind,
      namespace: review.namespace || undefined,
      name: review.name || undefined,
      dryRun: review.dryRun,
    });
    const decision = await decide(handler, review, log);
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
    } else {
      // Reading the body failed (client went away) or writing did; there is nobody left to answer properly.
      httpStatus = 500;
      logger.error({ err: error, webhook: path }, 'serving an admission request failed');
      if (!response.headersSent) writeStatus(response, 500, 'InternalError', String(error));
      else response.destroy();
    }
  } finally {
    metrics.inFlight.dec({ webhook: path });
    metrics.requests.inc({ webhook: path, code: String(httpStatus) });
    metrics.latency.observe({ webhook: path }, (performance.now() - started) / 1000);
  }
}
