import { createHash } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { createSecureContext, type SecureContext, type SecureContextOptions } from 'node:tls';
import { urlToHttpOptions } from 'node:url';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeApiError, KubeRequestError, parseRetryAfterHeader, type RequestTarget } from './errors.js';
import { onParentAbort } from './linked-signal.js';
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
 * How long the credentials client-node applied are reused before it is asked again. Applying them decodes (or reads
 * from files) the CA, the client certificate and key and builds an agent on every call, which cost more CPU than the
 * rest of a request; a token file or exec plugin credential that rotates is still picked up within this bound (client-go
 * re-reads token files every minute), and a 401 answer drops the cached credentials at once.
 */
export const CREDENTIAL_REUSE_MS = 10_000;

/** Request options that name the TLS credentials by a digest (see `CredentialKeyedAgent`). */
type KeyedTLSOptions = https.RequestOptions & {
  readonly secureContext?: SecureContext;
  readonly credentialsKey?: string;
};

/** What `applyToHTTPSOptions` put on the options, kept for the requests of the next `CREDENTIAL_REUSE_MS`. */
interface AppliedCredentials {
  readonly headers: http.OutgoingHttpHeaders;
  /**
   * The TLS options of every request, with one `secureContext` built from them (https only). On the transport's own
   * agent the PEM texts are left out and `credentialsKey` names them instead.
   */
  readonly tls: KeyedTLSOptions;
  /** client-node's agent (a proxy's); undefined when the transport's own keep-alive agent is used. */
  readonly agent: http.Agent | undefined;
}

/**
 * Sends requests to the API server of a KubeConfig's current context. Authentication (client certificates, tokens,
 * token files, exec plugins) is applied by client-node's `applyToHTTPSOptions`, at most every `CREDENTIAL_REUSE_MS`
 * and after every 401, so rotated tokens are picked up; connections are kept alive on one agent per transport instead
 * of client-node 1.4.0's agent per request.
 */
export class KubeTransport {
  readonly #kubeConfig: KubeConfig;
  readonly #server: URL;
  readonly #endpoint: Pick<http.RequestOptions, 'protocol' | 'hostname' | 'port'>;
  /** The server URL's path without its trailing slash; request paths are appended to it. */
  readonly #basePath: string;
  readonly #send: typeof http.request;
  readonly #agent: http.Agent;
  readonly #requestTimeoutMs: number;
  readonly #useClientNodeAgent: boolean;
  #credentials: Promise<AppliedCredentials> | undefined;
  #credentialsAppliedAt = 0;

  constructor(kubeConfig: KubeConfig, options: TransportOptions = {}) {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) {
      throw new Error(`kubeconfig has no cluster for its current context "${kubeConfig.getCurrentContext()}"`);
    }
    this.#kubeConfig = kubeConfig;
    this.#server = new URL(cluster.server);
    const endpoint = urlToHttpOptions(this.#server);
    this.#endpoint = { protocol: endpoint.protocol, hostname: endpoint.hostname, port: endpoint.port };
    this.#basePath = this.#server.pathname.replace(/\/$/, '');
    this.#send = this.#server.protocol === 'http:' ? http.request : https.request;
    this.#requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
    // A proxy needs client-node's proxy agent; everything else shares one keep-alive agent.
    this.#useClientNodeAgent = Boolean(cluster.proxyUrl);
    this.#agent =
      this.#server.protocol === 'http:'
        ? new http.Agent({ keepAlive: true, maxSockets: 64 })
        : new CredentialKeyedAgent({ keepAlive: true, maxSockets: 64 });
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
    let credentials: AppliedCredentials;
    try {
      credentials = await this.#appliedCredentials();
    } catch (error) {
      throw new KubeRequestError(request.target, error);
    }
    const payload = request.body === undefined ? undefined : Buffer.from(JSON.stringify(request.body));
    const headers: http.OutgoingHttpHeaders = { ...credentials.headers, Accept: 'application/json' };
    if (payload) {
      headers['Content-Type'] = request.contentType ?? 'application/json';
      headers['Content-Length'] = payload.length;
    }
    const timeoutMs = request.timeoutMs ?? this.#requestTimeoutMs;
    // No AbortSignal per request (an AbortController, a signal listener on the socket and `AbortSignal.any` cost as
    // much CPU as the request's own HTTP work): the deadline and the caller's signal destroy the request directly.
    let stop: ((reason: unknown) => void) | undefined;
    const answer = new Promise<{ statusCode: number; text: string; retryAfter: string | undefined }>(
      (resolve, reject) => {
        const req = this.#send(
          {
            ...this.#endpoint,
            path: `${this.#basePath}${request.path}${queryString(request.query)}`,
            method: request.method,
            headers,
            agent: this.#useClientNodeAgent ? credentials.agent : this.#agent,
            ...credentials.tls,
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
        stop = (reason) => {
          // The first reason wins; the socket errors that destroying the request causes are not the story.
          reject(new KubeRequestError(request.target, reason));
          req.destroy();
        };
        req.on('error', (error) => reject(new KubeRequestError(request.target, error)));
        req.end(payload);
      },
    );
    const timer = setTimeout(
      () => stop?.(new DOMException(`timed out after ${timeoutMs} ms`, 'TimeoutError')),
      Math.max(1, Math.ceil(timeoutMs)),
    );
    const detach = onParentAbort(request.signal, (reason) => stop?.(reason));
    let statusCode: number;
    let text: string;
    let retryAfter: string | undefined;
    try {
      ({ statusCode, text, retryAfter } = await answer);
    } finally {
      clearTimeout(timer);
      detach();
    }

    const body = parseBody(text);
    if (statusCode < 200 || statusCode >= 300) {
      // Credentials the server no longer accepts (a rotated token) are applied anew for the next request.
      if (statusCode === 401) this.#credentials = undefined;
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

  /** The credentials to send with, applied by client-node when none are cached or they are `CREDENTIAL_REUSE_MS` old. */
  #appliedCredentials(): Promise<AppliedCredentials> {
    const now = performance.now();
    if (this.#credentials && now - this.#credentialsAppliedAt < CREDENTIAL_REUSE_MS) return this.#credentials;
    const applying = this.#applyCredentials();
    this.#credentials = applying;
    this.#credentialsAppliedAt = now;
    // A failure is not cached: the next request asks client-node again.
    applying.catch(() => {
      if (this.#credentials === applying) this.#credentials = undefined;
    });
    return applying;
  }

  async #applyCredentials(): Promise<AppliedCredentials> {
    const options: https.RequestOptions = {};
    await this.#kubeConfig.applyToHTTPSOptions(options);
    // client-node writes the Authorization header into `options.headers` as a plain record.
    const headers = Array.isArray(options.headers) ? {} : { ...(options.headers as http.OutgoingHttpHeaders) };
    // PEM as text: a proxy's agent keys its connection pool by a name concatenated from ca, cert and key, and a Buffer
    // is decoded into a new string for that on every request; a string is not.
    const tlsOptions = {
      ...credentialOptions(options),
      ca: pemText(options.ca),
      cert: pemText(options.cert),
      key: pemText(options.key),
    };
    return {
      headers,
      tls: this.#tlsOptions(tlsOptions),
      agent: options.agent instanceof http.Agent ? options.agent : undefined,
    };
  }

  #tlsOptions(tlsOptions: https.RequestOptions): KeyedTLSOptions {
    if (this.#server.protocol !== 'https:') return tlsOptions;
    // One TLS context for every connection opened with these credentials: built per connection from the PEM
    // options, it parsed the CA, certificate and key again for each new keep-alive socket.
    const context = contextOptions(tlsOptions);
    const secureContext = createSecureContext(context);
    // client-node's agent (a proxy's) gets the options as client-node made them.
    if (this.#useClientNodeAgent) return { ...tlsOptions, secureContext };
    // The transport's agent pools sockets by a name it builds from the request options on every request and every
    // socket handed back; with the PEM texts in them that name is ~4 KB, built and hashed several times per request.
    // The connection takes its credentials from `secureContext` alone, so the texts stay out and a digest of them
    // keeps connections made with other credentials apart.
    const { ca: _ca, cert: _cert, key: _key, pfx: _pfx, passphrase: _passphrase, ...connection } = tlsOptions;
    return { ...connection, secureContext, credentialsKey: credentialsDigest(context) };
  }
}

/**
 * The transport's keep-alive agent: connections are pooled under Node's name for the request options plus the
 * `credentialsKey` they carry, so a socket made with one client certificate is never reused for another.
 */
class CredentialKeyedAgent extends https.Agent {
  override getName(options?: KeyedTLSOptions): string {
    const name = super.getName(options);
    return options?.credentialsKey === undefined ? name : `${name}:${options.credentialsKey}`;
  }
}

/**
 * A digest of the TLS material a context is built from: equal material, equal digest, so credentials applied again
 * unchanged keep their pooled connections.
 */
function credentialsDigest(context: SecureContextOptions): string {
  const hash = createHash('sha256');
  for (const field of ['ca', 'cert', 'key', 'pfx', 'passphrase'] as const) {
    hash.update(`${field}:`);
    const values: unknown[] = Array.isArray(context[field]) ? (context[field] as unknown[]) : [context[field]];
    for (const value of values) {
      if (value === undefined) hash.update('-');
      else if (typeof value === 'string' || Buffer.isBuffer(value)) hash.update(`${value.length}:`).update(value);
      // A key given as `{pem, passphrase}` (client-node never does this; kept distinct all the same).
      else hash.update(JSON.stringify(value));
      hash.update(';');
    }
  }
  return hash.digest('base64url');
}

/** PEM material as a string (client-node hands it over as Buffers); anything else as it is. */
function pemText<T>(value: T): T | string {
  return Buffer.isBuffer(value) ? value.toString('utf8') : value;
}

/** The parts of the request options that make a TLS context (the rest are per connection). */
function contextOptions(options: https.RequestOptions): SecureContextOptions {
  const context: SecureContextOptions = {};
  if (options.ca !== undefined) context.ca = options.ca;
  if (options.cert !== undefined) context.cert = options.cert;
  if (options.key !== undefined) context.key = options.key;
  if (options.pfx !== undefined) context.pfx = options.pfx;
  if (options.passphrase !== undefined) context.passphrase = options.passphrase;
  return context;
}

/** `?key=value&…` of the defined values (empty when there are none), percent-encoded. */
function queryString(query: Readonly<Record<string, QueryValue>> | undefined): string {
  if (query === undefined) return '';
  let text = '';
  for (const key in query) {
    const value = query[key];
    if (value === undefined) continue;
    text += `${text ? '&' : '?'}${encodeURIComponent(key)}=${encodeURIComponent(String(value))}`;
  }
  return text;
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
