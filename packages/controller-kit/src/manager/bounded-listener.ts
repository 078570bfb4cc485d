import type http from 'node:http';
import type https from 'node:https';
import type { Socket } from 'node:net';
import { ConnectionTable } from '../webhook/connections.js';

/**
 * The bounds of the manager's small GET servers (health probes, metrics, diagnostics): each request is a short GET
 * answered from memory, so a client that needs longer than these is not a prober or a scraper.
 */
export interface ListenerBounds {
  /** Open connections kept; one more closes the one that has waited longest (never one being answered). */
  readonly maxConnections: number;
  /** Until the request's headers are in. */
  readonly headersTimeoutMs: number;
  /** Until the whole request is in. */
  readonly requestTimeoutMs: number;
  /** An idle kept-alive connection is closed after this. */
  readonly keepAliveTimeoutMs: number;
}

export const DEFAULT_LISTENER_BOUNDS: ListenerBounds = {
  maxConnections: 64,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
};

/** Node's server options for `bounds` (pass to `http.createServer` / `https.createServer`). */
export function boundedServerOptions(bounds: ListenerBounds): http.ServerOptions {
  return {
    requestTimeout: bounds.requestTimeoutMs,
    headersTimeout: Math.min(bounds.headersTimeoutMs, bounds.requestTimeoutMs),
    keepAliveTimeout: bounds.keepAliveTimeoutMs,
    // Node checks the header and request deadlines on this interval (30 s by default, which would let a slow client
    // hold a connection that much past its deadline).
    connectionsCheckingInterval: Math.min(1_000, bounds.headersTimeoutMs),
  };
}

/**
 * Keeps at most `bounds.maxConnections` connections open on `server` by closing the one that has waited longest —
 * never by refusing the newcomer. Node's own `server.maxConnections` drops every connection past the limit at
 * accept, so whoever opens that many idle connections (no auth is needed to open a TCP connection) locks out the
 * kubelet's probes or the scraper until the timeouts end theirs; here a prober's fresh connection is the youngest
 * and the last to go. `secure` says whether requests arrive on TLS sockets wrapping the accepted ones.
 */
export function limitConnections(server: http.Server | https.Server, bounds: ListenerBounds, secure: boolean): void {
  const table = new ConnectionTable({
    maxConnections: bounds.maxConnections,
    // No body is read by these servers (requests are GETs; a body is discarded unbuffered).
    maxBufferedBytes: 0,
  });
  server.on('connection', (socket: Socket) => {
    table.accept(socket);
    // On plain HTTP the accepted socket is the one requests arrive on.
    if (!secure) table.secured(socket);
  });
  if (secure) server.on('secureConnection', (socket: Socket) => table.secured(socket));
  server.on('request', (request: http.IncomingMessage, response: http.ServerResponse) => {
    const socket = request.socket;
    table.serving(socket);
    response.once('close', () => {
      table.released(socket);
      table.answered(socket);
    });
  });
  // A connection with no bytes either way is closed; covers one stuck between requests.
  server.setTimeout(bounds.requestTimeoutMs + bounds.keepAliveTimeoutMs);
}
