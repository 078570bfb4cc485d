import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeApiError, KubeRequestError, parseRetryAfterHeader, type RequestTarget } from './errors.js';
import { linkedTimeoutSignal } from './linked-signal.js';
import { requestThrottleFor } from './request-rate-limit.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export type QueryValue = string | number | boolean | undefined;

export interface KubeRequest {
  readonly method: HttpMethod;
  /** Path below the server URL, e.g. `/apis/coordination.k8s.io/v1/namespaces/ns/leases/x`. */
  readonly path: string;
  readonly query?: Readonly<Record<string, QueryValue>> | undefined;
  /** Sent as JSON (which is also valid YAML for `application/apply-patch+yaml`). */
  readonly body?: unknown;
  /** Content-Type of the body; `application/json` by default. */
  readonly contentType?: string | undefined;
  readonly signal?: AbortSignal | undefined;
  /** Client-side deadline for the whole request; the transport's default when absent. */
  readonly timeoutMs?: number | undefined;
  /** What the request is about, for error messages. */
  readonly target?: RequestTarget | undefined;
}

export interface TransportOptions {
  /** Default per-request deadline (client-go has none by default; a controller must not hang forever). */
  readonly requestTimeoutMs?: number;
}

/**
 * Sends requests to the API server of a KubeConfig's current context. Authentication (client certificates, tokens,
 * token files, exec plugins) is applied by client-node's `applyToHTTPSOptions` on every request, so rotated tokens
 * are picked up; connections are kept alive on one agent per transport instead of client-node 1.4.0's agent per
 * request.
 */
export class KubeTransport {
  readonly #kubeConfig: KubeConfig;
  readonly #server: URL;
  readonly #agent: http.Agent;
  readonly #requestTimeoutMs: number;
  readonly #useClientNodeAgent: boolean;

  constructor(kubeConfig: KubeConfig, options: TransportOptions = {}) {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) {
      throw new Error(`kubeconfig has no cluster for its current context "${kubeConfig.getCurrentContext()}"`);
    }
    this.#kubeConfig = kubeConfig;
    this.#server = new URL(cluster.server);
    this.#requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
    // A proxy needs client-node's proxy agent; everything else shares one keep-alive agent.
    this.#useClientNodeAgent = Boolean(cluster.proxyUrl);
    this.#agent =
      this.#server.protocol === 'http:'
        ? new http.Agent({ keepAlive: true, maxSockets: 64 })
        : new https.Agent({ keepAlive: true, maxSockets: 64 });
  }

  /** The API server URL of the current context. */
  get server(): string {
    return this.#server.toString();
  }

  /**
   * Sends one request. Resolves to the parsed JSON body (undefined when empty) for 2xx answers; rejects with
   * `KubeApiError` for any other status and with `KubeRequestError` when no answer arrived.
   */
  async request(request: KubeRequest): Promise<unknown> {
    await requestThrottleFor(this.#kubeConfig)?.wait(request.signal);
    if (request.signal?.aborted) throw new KubeRequestError(request.target, request.signal.reason);
    const options: https.RequestOptions = {};
    try {
      await this.#kubeConfig.applyToHTTPSOptions(options);
    } catch (error) {
      throw new KubeRequestError(request.target, error);
    }
    const url = new URL(this.#server.toString());
    url.pathname = `${url.pathname.replace(/\/$/, '')}${request.path}`;
    for (const [key, value] of Object.entries(request.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    const payload = request.body === undefined ? undefined : Buffer.from(JSON.stringify(request.body));
    // client-node writes the Authorization header into `options.headers` as a plain record.
    const authHeaders = Array.isArray(options.headers) ? {} : (options.headers as http.OutgoingHttpHeaders | undefined);
    const headers: http.OutgoingHttpHeaders = { ...authHeaders, Accept: 'application/json' };
    if (payload) {
      headers['Content-Type'] = request.contentType ?? 'application/json';
      headers['Content-Length'] = payload.length;
    }
    const linked = linkedTimeoutSignal(request.signal, request.timeoutMs ?? this.#requestTimeoutMs);
    const signal = linked.signal;
    const send = url.protocol === 'http:' ? http.request : https.request;

    const answer = new Promise<{ statusCode: number; text: string; retryAfter: string | undefined }>(
      (resolve, reject) => {
        const req = send(
          url,
          {
            method: request.method,
            headers,
            agent: this.#useClientNodeAgent ? options.agent : this.#agent,
            ...credentialOptions(options),
            signal,
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (chunk: Buffer) => chunks.push(chunk));
            res.on('end', () =>
              resolve({
                statusCode: res.statusCode ?? 0,
                text: Buffer.concat(chunks).toString('utf8'),
                retryAfter: res.headers['retry-after'],
              }),
            );
            res.on('error', (error) => reject(new KubeRequestError(request.target, error)));
          },
        );
        req.on('error', (error) =>
          reject(new KubeRequestError(request.target, signal.aborted ? signal.reason : error)),
        );
        req.end(payload);
      },
    );
    let statusCode: number;
    let text: string;
    let retryAfter: string | undefined;
    try {
      ({ statusCode, text, retryAfter } = await answer);
    } finally {
      linked.dispose();
    }

    const body = parseBody(text);
    if (statusCode < 200 || statusCode >= 300) {
      throw new KubeApiError(statusCode, body, request.target, {
        retryAfterSeconds: parseRetryAfterHeader(retryAfter),
      });
    }
    return body;
  }

  /** Closes idle keep-alive connections (call when the owner stops). */
  close(): void {
    this.#agent.destroy();
  }
}

/** The TLS and auth settings `applyToHTTPSOptions` put on `options`, for a request of our own. */
export function credentialOptions(options: https.RequestOptions): https.RequestOptions {
  return {
    ca: options.ca,
    cert: options.cert,
    key: options.key,
    pfx: options.pfx,
    passphrase: options.passphrase,
    servername: options.servername,
    auth: options.auth,
    ...(options.rejectUnauthorized === undefined ? {} : { rejectUnauthorized: options.rejectUnauthorized }),
  };
}

function parseBody(text: string): unknown {
  if (text.length === 0) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
