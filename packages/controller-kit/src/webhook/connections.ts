import type { Socket } from 'node:net';
import type { WebhookMetrics } from './metrics.js';

/** What was full when the server closed a connection to make room. */
export type EvictionReason = 'connections' | 'body_bytes';

/** One request body being received, as the table accounts for it. */
export interface BodyTracker {
  /**
   * Counts `bytes` more of this body against the shared budget. When they would not fit, the bodies that have been
   * arriving longest are evicted first — possibly this one, whose `cut` has then been called before this returns.
   */
  add(bytes: number): void;
  /** The body is complete, or its read ended otherwise: its bytes leave the budget. Idempotent. */
  done(): void;
}

export interface ConnectionTableOptions {
  /** Open connections kept; one more evicts the connection that has waited longest (never one in a handler). */
  readonly maxConnections: number;
  /** Body bytes held, all requests still being received together. */
  readonly maxBufferedBytes: number;
  /** Where the table counts what it holds and evicts; servers without such metrics pass none. */
  readonly metrics?: Pick<WebhookMetrics, 'receiving' | 'receivingBytes' | 'evictions'>;
}

interface Connection {
  readonly raw: Socket;
  /**
   * When its current wait began (accept, or the end of its last answer), as an order stamp: the smallest stamp has
   * waited longest. A connection that trickles bytes still waits, so it ages like an idle one.
   */
  waitingSince: number;
  /** Concurrency slots its reviews hold (more than one only with pipelining); while any, it is never evicted. */
  inHandler: number;
  /** Evicted or closed: no longer counted, whatever an evicted socket still does during its bounded linger. */
  gone: boolean;
  body: ActiveBody | undefined;
}

interface ActiveBody {
  readonly connection: Connection | undefined;
  readonly startedAt: number;
  bytes: number;
  finished: boolean;
  readonly cut: (reason: EvictionReason) => void;
}

/** The TCP four-tuple: the same on a raw socket and on the TLS socket that wraps it (both are public properties). */
function addressKey(socket: Socket): string | undefined {
  const { remoteAddress, remotePort, localAddress, localPort } = socket;
  if (remoteAddress === undefined || remotePort === undefined) return undefined;
  return `${remoteAddress}\u0000${remotePort}\u0000${localAddress ?? ''}\u0000${localPort ?? ''}`;
}

/**
 * The webhook server's connections and the body bytes they hold. Neither bound is enforced by refusing what is new:
 * a refused newcomer would let whoever holds old connections (idle after the handshake, or trickling a body) lock
 * the API server out for as long as the timeouts allow. Instead the connection (or body) that has waited longest
 * makes room; legitimate calls are quick, so they are the youngest and the last to go.
 */
export class ConnectionTable {
  private readonly connections = new Map<Socket, Connection>();
  /** Accepted connections by four-tuple until their TLS handshake completes and the TLS socket is known. */
  private readonly handshaking = new Map<string, Connection>();
  private readonly byTlsSocket = new WeakMap<Socket, Connection>();
  private readonly bodies = new Set<ActiveBody>();
  private open = 0;
  private bufferedBytes = 0;
  private stamp = 0;

  constructor(private readonly options: ConnectionTableOptions) {}

  /** A TCP connection was accepted (the https server's `connection` event, before the TLS handshake). */
  accept(raw: Socket): void {
    const connection: Connection = {
      raw,
      waitingSince: this.next(),
      inHandler: 0,
      gone: false,
      body: undefined,
    };
    this.connections.set(raw, connection);
    this.open += 1;
    const key = addressKey(raw);
    if (key !== undefined) this.handshaking.set(key, connection);
    raw.once('close', () => this.forget(connection, key));
    while (this.open > this.options.maxConnections) {
      const victim = this.longestWaiting();
      if (!victim) break;
      this.evict(victim, 'connections');
    }
  }

  /** Its TLS handshake completed (`secureConnection`): requests on `socket` now belong to the accepted connection. */
  secured(socket: Socket): void {
    const key = addressKey(socket);
    const connection = key === undefined ? undefined : this.handshaking.get(key);
    if (key !== undefined) this.handshaking.delete(key);
    if (connection) this.byTlsSocket.set(socket, connection);
  }

  /** A review on `socket` took a concurrency slot: its connection is not evicted until the slot is `released`. */
  serving(socket: Socket): void {
    const connection = this.byTlsSocket.get(socket);
    if (connection) connection.inHandler += 1;
  }

  /** The slot a review on `socket` took is given back. */
  released(socket: Socket): void {
    const connection = this.byTlsSocket.get(socket);
    if (connection && connection.inHandler > 0) connection.inHandler -= 1;
  }

  /** A response on `socket` is done, whatever it was: the connection waits for its next request from now on. */
  answered(socket: Socket): void {
    const connection = this.byTlsSocket.get(socket);
    if (connection) connection.waitingSince = this.next();
  }

  /**
   * Starts accounting for one body arriving on `socket`. `cut` is called when the table evicts it: it must fail the
   * read at once and drop what was buffered (the table has already taken those bytes off the budget).
   */
  startBody(socket: Socket, cut: (reason: EvictionReason) => void): BodyTracker {
    const connection = this.byTlsSocket.get(socket);
    const body: ActiveBody = { connection, startedAt: this.next(), bytes: 0, finished: false, cut };
    this.bodies.add(body);
    if (connection) connection.body = body;
    this.options.metrics?.receiving.inc();
    return {
      add: (bytes) => {
        if (body.finished) return;
        while (this.bufferedBytes + bytes > this.options.maxBufferedBytes) {
          // Never empty here: this body is among them, and one chunk alone fits (the read refuses bigger bodies).
          const victim = this.oldestBody();
          if (!victim) break;
          this.evictBody(victim);
          if (victim === body) return;
        }
        body.bytes += bytes;
        this.bufferedBytes += bytes;
        this.options.metrics?.receivingBytes.inc(bytes);
      },
      done: () => this.release(body),
    };
  }

  private next(): number {
    this.stamp += 1;
    return this.stamp;
  }

  private forget(connection: Connection, key: string | undefined): void {
    this.connections.delete(connection.raw);
    if (key !== undefined && this.handshaking.get(key) === connection) this.handshaking.delete(key);
    if (!connection.gone) this.open -= 1;
    connection.gone = true;
  }

  /** The connection that has waited longest and holds no slot; linear, which at a few hundred entries is cheap. */
  private longestWaiting(): Connection | undefined {
    let oldest: Connection | undefined;
    for (const connection of this.connections.values()) {
      if (connection.inHandler > 0 || connection.gone) continue;
      if (!oldest || connection.waitingSince < oldest.waitingSince) oldest = connection;
    }
    return oldest;
  }

  private oldestBody(): ActiveBody | undefined {
    let oldest: ActiveBody | undefined;
    for (const body of this.bodies) {
      if (!oldest || body.startedAt < oldest.startedAt) oldest = body;
    }
    return oldest;
  }

  /**
   * Closes `connection`. One receiving a body is answered (503) by its read, which lingers a bounded moment so that
   * the client can read why; any other is destroyed at once. Either way it stops counting now.
   */
  private evict(connection: Connection, reason: EvictionReason): void {
    connection.gone = true;
    this.open -= 1;
    this.options.metrics?.evictions.inc({ reason });
    const body = connection.body;
    if (body && !body.finished) {
      this.release(body);
      body.cut(reason);
    } else {
      connection.raw.destroy();
    }
  }

  private evictBody(body: ActiveBody): void {
    if (body.connection && !body.connection.gone) {
      this.evict(body.connection, 'body_bytes');
      return;
    }
    // A body whose connection the table does not know (or saw close a moment ago): only the read is cut.
    this.options.metrics?.evictions.inc({ reason: 'body_bytes' });
    this.release(body);
    body.cut('body_bytes');
  }

  private release(body: ActiveBody): void {
    if (body.finished) return;
    body.finished = true;
    this.bodies.delete(body);
    this.bufferedBytes -= body.bytes;
    this.options.metrics?.receivingBytes.dec(body.bytes);
    this.options.metrics?.receiving.dec();
    if (body.connection?.body === body) body.connection.body = undefined;
  }
}
