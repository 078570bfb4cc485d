import { createHash } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { z } from 'zod';
import { KubeTransport } from '../client/transport.js';
import { CertWatcher } from '../webhook/cert-watcher.js';
import { certWatcherMetrics } from '../webhook/metrics.js';
import type { BindAddress } from './bind-address.js';
import { boundedServerOptions, DEFAULT_LISTENER_BOUNDS, limitConnections } from './bounded-listener.js';
import type { RunningServer } from './probes.js';
import { generateSelfSignedCertificate } from './self-signed.js';
import { DEFAULT_TLS_OPTIONS, secureContextTLS, type TLSOptions } from './tls-options.js';

/** The non-resource URL and verb a scraper must be allowed (the `metrics-reader` ClusterRole grants them). */
export const METRICS_PATH = '/metrics';

export interface DiagnosticsAuthOptions {
  /** How long an answered TokenReview is reused (controller-runtime's authenticator cache: 1 min). */
  readonly authenticationTtlMs?: number;
  /** How long an allowed SubjectAccessReview is reused (1 min here; controller-runtime: 5 min). */
  readonly allowedTtlMs?: number;
  /** How long a denial is reused (controller-runtime: 30 s; shorter here so a new binding takes effect soon). */
  readonly deniedTtlMs?: number;
  /** Entries kept per cache; the oldest go first (bounds memory whatever tokens callers send). */
  readonly maxEntries?: number;
}

/** What authenticating and authorizing one scrape decided. */
export type DiagnosticsDecision =
  | { readonly status: 200; readonly user: string }
  | { readonly status: 401 | 403 | 500; readonly message: string };

const tokenReviewSchema = z.looseObject({
  status: z
    .looseObject({
      authenticated: z.boolean().optional(),
      error: z.string().optional(),
      user: z
        .looseObject({
          username: z.string().optional(),
          uid: z.string().optional(),
          groups: z.array(z.string()).optional(),
          extra: z.record(z.string(), z.array(z.string())).optional(),
        })
        .optional(),
    })
    .optional(),
});

const subjectAccessReviewSchema = z.looseObject({
  status: z.looseObject({ allowed: z.boolean().optional(), reason: z.string().optional() }).optional(),
});

interface AuthenticatedUser {
  readonly username: string;
  readonly uid: string | undefined;
  readonly groups: readonly string[];
  readonly extra: Readonly<Record<string, readonly string[]>> | undefined;
}

class ExpiringCache<V> {
  readonly #entries = new Map<string, { value: V; expiresAt: number }>();
  constructor(private readonly maxEntries: number) {}

  get(key: string): V | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= Date.now()) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: string, value: V, ttlMs: number): void {
    this.#entries.delete(key);
    if (this.#entries.size >= this.maxEntries) {
      const oldest = this.#entries.keys().next().value;
      if (oldest !== undefined) this.#entries.delete(oldest);
    }
    this.#entries.set(key, { value, expiresAt: Date.now() + ttlMs });
  }

  get size(): number {
    return this.#entries.size;
  }
}

/**
 * controller-runtime's `filters.WithAuthenticationAndAuthorization`: the bearer token is authenticated with a
 * TokenReview and the user authorized with a SubjectAccessReview for the non-resource URL `/metrics`, verb `get`.
 * Answers are cached briefly, keyed by a hash of the token (the token itself is never kept).
 */
export class DiagnosticsAuthorizer {
  readonly #transport: KubeTransport;
  /** `null`: the token was reviewed and refused. */
  readonly #users: ExpiringCache<AuthenticatedUser | null>;
  readonly #decisions: ExpiringCache<boolean>;
  readonly #options: Required<DiagnosticsAuthOptions>;
  /** TokenReviews and SubjectAccessReviews sent (what the caches save). */
  reviewsSent = 0;

  constructor(kubeConfig: KubeConfig, options: DiagnosticsAuthOptions = {}) {
    this.#transport = new KubeTransport(kubeConfig, { requestTimeoutMs: 10_000 });
    this.#options = {
      authenticationTtlMs: options.authenticationTtlMs ?? 60_000,
      allowedTtlMs: options.allowedTtlMs ?? 60_000,
      deniedTtlMs: options.deniedTtlMs ?? 10_000,
      maxEntries: options.maxEntries ?? 1024,
    };
    this.#users = new ExpiringCache(this.#options.maxEntries);
    this.#decisions = new ExpiringCache(this.#options.maxEntries);
  }

  /** Decides one request from its `Authorization` header. */
  async decide(authorization: string | undefined): Promise<DiagnosticsDecision> {
    const token = /^Bearer\s+(\S{1,8192})\s*$/i.exec(authorization ?? '')?.[1];
    if (!token) return { status: 401, message: 'Unauthorized: a bearer token is required' };
    const key = createHash('sha256').update(token).digest('hex');
    let user: AuthenticatedUser | undefined;
    try {
      user = await this.#authenticate(key, token);
    } catch (error) {
      return { status: 500, message: `cannot authenticate the request: ${shortError(error)}` };
    }
    if (!user) return { status: 401, message: 'Unauthorized: the token was not accepted' };
    let allowed: boolean;
    try {
      allowed = await this.#authorize(key, user);
    } catch (error) {
      return { status: 500, message: `cannot authorize the request: ${shortError(error)}` };
    }
    if (!allowed) {
      return {
        status: 403,
        message: `Forbidden: user "${user.username}" may not get non-resource URL "${METRICS_PATH}"`,
      };
    }
    return { status: 200, user: user.username };
  }

  close(): void {
    this.#transport.close();
  }

  async #authenticate(key: string, token: string): Promise<AuthenticatedUser | undefined> {
    const cached = this.#users.get(key);
    if (cached !== undefined) return cached ?? undefined;
    this.reviewsSent += 1;
    const body = await this.#transport.request({
      method: 'POST',
      path: '/apis/authentication.k8s.io/v1/tokenreviews',
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
      target: { verb: 'create', resource: 'TokenReview' },
    });
    const status = tokenReviewSchema.parse(body).status;
    const username = status?.user?.username;
    const user =
      status?.authenticated === true && username
        ? {
            username,
            uid: status.user?.uid,
            groups: status.user?.groups ?? [],
            extra: status.user?.extra,
          }
        : null;
    this.#users.set(key, user, user ? this.#options.authenticationTtlMs : this.#options.deniedTtlMs);
    return user ?? undefined;
  }

  async #authorize(key: string, user: AuthenticatedUser): Promise<boolean> {
    const cached = this.#decisions.get(key);
    if (cached !== undefined) return cached;
    this.reviewsSent += 1;
    const body = await this.#transport.request({
      method: 'POST',
      path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
      body: {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: {
          user: user.username,
          ...(user.uid ? { uid: user.uid } : {}),
          groups: user.groups,
          ...(user.extra ? { extra: user.extra } : {}),
          nonResourceAttributes: { path: METRICS_PATH, verb: 'get' },
        },
      },
      target: { verb: 'create', resource: 'SubjectAccessReview' },
    });
    const allowed = subjectAccessReviewSchema.parse(body).status?.allowed === true;
    this.#decisions.set(key, allowed, allowed ? this.#options.allowedTtlMs : this.#options.deniedTtlMs);
    return allowed;
  }
}

function shortError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.length > 200 ? `${message.slice(0, 199)}…` : message;
}

export interface DiagnosticsServerOptions {
  readonly address: BindAddress;
  readonly registry: Registry;
  readonly logger: Logger;
  /** Plain HTTP, no authentication (`--insecure-diagnostics`). */
  readonly insecure: boolean;
  /** Needed unless insecure: the TokenReviews and SubjectAccessReviews are sent with it. */
  readonly kubeConfig?: KubeConfig;
  readonly tls?: TLSOptions;
  /** `tls.crt`/`tls.key` here (reloaded on change); absent: a self-signed certificate made at start. */
  readonly certDir?: string | undefined;
  readonly auth?: DiagnosticsAuthOptions;
}

/**
 * Serves `/metrics` as Cluster API providers do (controller-runtime's metrics server with `SecureServing` and
 * `FilterProvider: filters.WithAuthenticationAndAuthorization`): HTTPS, a bearer token checked by TokenReview, the
 * user checked by SubjectAccessReview. With `insecure`, plain HTTP and no checks (only for loopback or tests).
 */
export async function startDiagnosticsServer(options: DiagnosticsServerOptions): Promise<RunningServer> {
  const { logger, registry } = options;
  const authorizer =
    options.insecure || !options.kubeConfig ? undefined : new DiagnosticsAuthorizer(options.kubeConfig, options.auth);
  if (!options.insecure && !authorizer) throw new Error('secure diagnostics need a kubeconfig to review tokens with');
  const handle = async (request: http.IncomingMessage, response: http.ServerResponse): Promise<void> => {
    const path = new URL(request.url ?? '/', 'http://diagnostics').pathname;
    if (path !== METRICS_PATH) {
      response.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');
      return;
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { 'Content-Type': 'text/plain', Allow: 'GET' }).end('method not allowed\n');
      return;
    }
    if (authorizer) {
      const decision = await authorizer.decide(request.headers.authorization);
      if (decision.status !== 200) {
        if (decision.status === 500) logger.warn({ reason: decision.message }, 'cannot check a metrics scrape');
        else logger.debug({ status: decision.status, reason: decision.message }, 'refused a metrics scrape');
        response.writeHead(decision.status, { 'Content-Type': 'text/plain' }).end(`${decision.message}\n`);
        return;
      }
    }
    const body = await registry.metrics();
    response.writeHead(200, { 'Content-Type': registry.contentType }).end(body);
  };
  const listener = (request: http.IncomingMessage, response: http.ServerResponse): void => {
    // No body is read: a scrape is a GET.
    request.resume();
    handle(request, response).catch((error: unknown) => {
      logger.error({ err: error, url: request.url }, 'diagnostics request failed');
      if (!response.headersSent) response.writeHead(500, { 'Content-Type': 'text/plain' });
      response.end('internal error\n');
    });
  };
  const bounds = boundedServerOptions(DEFAULT_LISTENER_BOUNDS);
  let server: http.Server;
  let stopWatching: AbortController | undefined;
  if (options.insecure) {
    server = http.createServer(bounds, listener);
  } else {
    const tls = secureContextTLS(options.tls ?? DEFAULT_TLS_OPTIONS);
    let certificate: { certPem: string; keyPem: string };
    if (options.certDir) {
      stopWatching = new AbortController();
      let secure: https.Server | undefined;
      const watcher = new CertWatcher({
        certPath: join(options.certDir, 'tls.crt'),
        keyPath: join(options.certDir, 'tls.key'),
        pollIntervalMs: 10_000,
        logger,
        metrics: certWatcherMetrics(registry),
        onChange: (next) => secure?.setSecureContext({ cert: next.certPem, key: next.keyPem, ...tls }),
      });
      certificate = await watcher.start(stopWatching.signal);
      secure = https.createServer(
        { ...bounds, handshakeTimeout: 10_000, cert: certificate.certPem, key: certificate.keyPem, ...tls },
        listener,
      );
      server = secure;
    } else {
      certificate = await generateSelfSignedCertificate();
      server = https.createServer(
        { ...bounds, handshakeTimeout: 10_000, cert: certificate.certPem, key: certificate.keyPem, ...tls },
        listener,
      );
    }
  }
  limitConnections(server, DEFAULT_LISTENER_BOUNDS, !options.insecure);
  return new Promise((resolve, reject) => {
    server.once('error', (error) => {
      stopWatching?.abort();
      authorizer?.close();
      reject(
        new Error(
          `cannot serve diagnostics on ${options.address.host ?? ''}:${options.address.port}: ${error.message}`,
          {
            cause: error,
          },
        ),
      );
    });
    server.listen(options.address.port, options.address.host, () => {
      const bound = server.address() as AddressInfo;
      logger.info(
        {
          address: `${bound.address}:${bound.port}`,
          secure: !options.insecure,
          certificate: options.insecure ? undefined : (options.certDir ?? 'self-signed'),
        },
        'serving metrics',
      );
      resolve({
        address: bound,
        close: () =>
          new Promise<void>((done) => {
            stopWatching?.abort();
            authorizer?.close();
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
