import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { BindAddress } from './bind-address.js';
import { boundedServerOptions, DEFAULT_LISTENER_BOUNDS, limitConnections } from './bounded-listener.js';

/** A health or readiness check: resolves when healthy, throws (with the reason) when not. */
export type Checker = () => void | Promise<void>;

export interface NamedChecker {
  readonly name: string;
  readonly check: Checker;
}

/** The result of running a set of checks, in controller-runtime's `/healthz?verbose` text format. */
export async function runChecks(checks: readonly NamedChecker[]): Promise<{ healthy: boolean; report: string }> {
  const lines: string[] = [];
  let healthy = true;
  for (const { name, check } of checks) {
    try {
      await check();
      lines.push(`[+]${name} ok`);
    } catch (error) {
      healthy = false;
      lines.push(`[-]${name} failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return { healthy, report: `${lines.join('\n')}\n${healthy ? 'healthz check passed' : 'healthz check failed'}\n` };
}

export interface ProbeServerOptions {
  readonly address: BindAddress;
  readonly healthz: () => readonly NamedChecker[];
  readonly readyz: () => readonly NamedChecker[];
  readonly logger: Logger;
}

export interface MetricsServerOptions {
  readonly address: BindAddress;
  readonly registry: Registry;
  readonly logger: Logger;
}

/** A started HTTP server and the address it really listens on (port 0 resolved). */
export interface RunningServer {
  readonly address: AddressInfo;
  close(): Promise<void>;
}

/** Serves `/healthz` and `/readyz` (controller-runtime's probe endpoints; `?verbose` lists every check). */
export function startProbeServer(options: ProbeServerOptions): Promise<RunningServer> {
  return listen(options.address, options.logger, 'health probes', async (request, response) => {
    const path = new URL(request.url ?? '/', 'http://probe').pathname;
    const checks =
      path === '/healthz' || path === '/livez' ? options.healthz() : path === '/readyz' ? options.readyz() : undefined;
    if (!checks) {
      response.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');
      return;
    }
    const { healthy, report } = await runChecks(checks);
    response.writeHead(healthy ? 200 : 500, { 'Content-Type': 'text/plain; charset=utf-8' }).end(report);
  });
}

/** Serves the registry on `/metrics` in the Prometheus text format. */
export function startMetricsServer(options: MetricsServerOptions): Promise<RunningServer> {
  return listen(options.address, options.logger, 'metrics', async (request, response) => {
    const path = new URL(request.url ?? '/', 'http://metrics').pathname;
    if (path !== '/metrics') {
      response.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');
      return;
    }
    const body = await options.registry.metrics();
    response.writeHead(200, { 'Content-Type': options.registry.contentType }).end(body);
  });
}

function listen(
  address: BindAddress,
  logger: Logger,
  what: string,
  handle: (request: http.IncomingMessage, response: http.ServerResponse) => Promise<void>,
): Promise<RunningServer> {
  const server = http.createServer(boundedServerOptions(DEFAULT_LISTENER_BOUNDS), (request, response) => {
    // No body is read: probes and scrapes are GETs.
    request.resume();
    handle(request, response).catch((error: unknown) => {
      logger.error({ err: error, url: request.url }, `${what} request failed`);
      if (!response.headersSent) response.writeHead(500, { 'Content-Type': 'text/plain' });
      response.end('internal error\n');
    });
  });
  limitConnections(server, DEFAULT_LISTENER_BOUNDS, false);
  return new Promise((resolve, reject) => {
    server.once('error', (error) => {
      reject(
        new Error(`cannot serve ${what} on ${address.host ?? ''}:${address.port}: ${error.message}`, { cause: error }),
      );
    });
    server.listen(address.port, address.host, () => {
      const bound = server.address() as AddressInfo;
      logger.info({ address: `${bound.address}:${bound.port}` }, `serving ${what}`);
      resolve({
        address: bound,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
