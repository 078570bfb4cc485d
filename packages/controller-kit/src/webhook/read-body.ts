import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Clock } from '../queue/clock.js';
import type { BodyTracker, EvictionReason } from './connections.js';

/**
 * How long a request body may take to arrive, from the end of its headers (default 5 s). The API server writes a
 * review in one go: a few KiB arrive in one round trip, and even the largest one (`MAX_REVIEW_BYTES`, 7 MiB) needs
 * only 11 Mbit/s to make it in 5 s. A body still arriving after that is a stalled or hostile client, and the API
 * server's own call (10 s by default) would leave its handler little time anyway.
 */
export const DEFAULT_BODY_TIMEOUT_MS = 5_000;

/** A request the server refuses before any handler runs: answered with this HTTP status and a Status body. */
export class RejectedRequest extends Error {
  override readonly name = 'RejectedRequest';
  constructor(
    readonly httpStatus: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

export function tooLarge(maxBytes: number): RejectedRequest {
  return new RejectedRequest(413, 'RequestEntityTooLarge', `request body exceeds ${maxBytes} bytes`);
}

const EVICTED_BECAUSE: Record<EvictionReason, string> = {
  connections: 'every connection the server keeps was taken',
  body_bytes: 'the body bytes the server holds for requests still arriving reached their bound',
};

export interface ReadBodyOptions {
  /** Largest body accepted; refused (413) as soon as the bytes read pass it. */
  readonly maxBytes: number;
  /** Deadline for the whole body, from the start of the read (408 past it). */
  readonly timeoutMs: number;
  readonly clock: Clock;
  /** Accounts the body's bytes against the server's budget; `cut` fails the read when the table evicts it. */
  readonly track: (cut: (reason: EvictionReason) => void) => BodyTracker;
}

/**
 * Reads a whole body, bounded in size (`maxBytes`, so at most that much is ever held) and in time (`timeoutMs`, so a
 * client trickling bytes is cut off however slowly it sends). On refusal the request is paused, not destroyed: the
 * answer still has to go out on its socket (`lingerAndClose`).
 */
export function readBody(request: IncomingMessage, options: ReadBodyOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    let cancelDeadline = (): void => undefined;
    const finish = (error: Error | undefined): void => {
      if (settled) return;
      settled = true;
      cancelDeadline();
      tracker.done();
      request.off('data', onData);
      request.off('end', onEnd);
      request.off('error', onError);
      request.off('aborted', onAborted);
      request.off('close', onClose);
      if (error) {
        request.pause();
        chunks = [];
        reject(error);
      } else {
        resolve(Buffer.concat(chunks, size));
      }
    };
    const tracker = options.track((reason) =>
      finish(
        new RejectedRequest(
          503,
          'ServiceUnavailable',
          `the request body was still arriving when ${EVICTED_BECAUSE[reason]}; it had waited longest, so it was dropped`,
        ),
      ),
    );
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > options.maxBytes) {
        finish(tooLarge(options.maxBytes));
        return;
      }
      tracker.add(chunk.length);
      if (!settled) chunks.push(chunk);
    };
    const onEnd = (): void => finish(undefined);
    const onError = (error: Error): void =>
      finish(new Error(`reading the request body failed: ${error.message}`, { cause: error }));
    const onAborted = (): void => finish(new Error('the client closed the connection before the body was complete'));
    // Without `end` first, a close means the body never completed (Node ≥ 16 may emit only this).
    const onClose = (): void => onAborted();
    request.on('data', onData);
    request.once('end', onEnd);
    request.once('error', onError);
    request.once('aborted', onAborted);
    request.once('close', onClose);
    cancelDeadline = options.clock.schedule(
      () =>
        finish(
          new RejectedRequest(
            408,
            'RequestTimeout',
            `the request body did not arrive within ${options.timeoutMs} ms (${size} bytes received)`,
          ),
        ),
      options.timeoutMs,
    );
  });
}

/** Go's net/http figures for closing after an unread body: discard at most 256 KiB during at most 500 ms. */
const LINGER_BYTES = 256 * 1024;
const LINGER_MS = 500;

/**
 * Ends a connection whose request body was not read to its end. Destroying it outright while body bytes sit unread
 * makes the kernel answer with a reset, and the client may lose the answer it has not read yet; so the write side is
 * closed first and a bounded amount of the rest is read and dropped, as Go's server does, then the socket is
 * destroyed. Timed with real timers: it bounds a socket's life, not a request's, and tests never need to move it.
 */
export function lingerAndClose(request: IncomingMessage, socket: Socket | null): void {
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
