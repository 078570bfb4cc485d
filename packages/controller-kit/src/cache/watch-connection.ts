import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeApiError, KubeRequestError, parseRetryAfterHeader, type RequestTarget } from '../client/errors.js';
import { requestThrottleFor } from '../client/request-rate-limit.js';
import { credentialOptions } from '../client/transport.js';
import { LineSplitter } from './lines.js';
import { ListItemSplitter, type ListItemSplitterOptions } from './list-items.js';
import { type WatchEvent, watchEventSchema } from './wire.js';

/** A streaming request: a watch, or a LIST read as it arrives. */
export interface WatchRequest {
  /** Collection path, e.g. `/apis/ipam.cluster.x-k8s.io/v1beta2/ipaddressclaims`. */
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly signal: AbortSignal;
  /**
   * The stream is dropped when nothing arrived for this long (a watch: no event, bookmarks included; a list: no
   * byte): a half-open connection never errors by itself, and a stream the server stopped feeding looks the same.
   */
  readonly idleTimeoutMs: number;
  /** Deadline for the response headers (the API server sends them as soon as the watch is registered). */
  readonly openTimeoutMs: number;
  readonly target: RequestTarget;
}

/** The watch went silent without the server closing it: no event within the idle timeout (or no headers in time). */
export class WatchStalledError extends Error {
  override readonly name = 'WatchStalledError';
}

/**
 * Opens streaming requests (watches, and lists read item by item) with the kubeconfig's credentials over one
 * keep-alive agent (client-node 1.4.0's `Watch` makes a new agent per request and loses its timeout). Authentication is
 * applied per request so rotated tokens are used.
 */
export class WatchConnection {
  private readonly server: URL;
  private readonly agent: http.Agent;
  private readonly useClientNodeAgent: boolean;

  constructor(private readonly kubeConfig: KubeConfig) {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error(`kubeconfig has no cluster for context "${kubeConfig.getCurrentContext()}"`);
    this.server = new URL(cluster.server);
    this.useClientNodeAgent = Boolean(cluster.proxyUrl);
    const agentOptions = { keepAlive: true, keepAliveMsecs: 30_000 };
    this.agent = this.server.protocol === 'http:' ? new http.Agent(agentOptions) : new https.Agent(agentOptions);
  }

  /**
   * Yields decoded watch events until the server ends the stream (normal return), or throws: `KubeApiError` for a
   * non-200 answer (410 included, with the server's Retry-After), `WatchStalledError` on silence, `KubeRequestError`
   * for transport failures. Aborting the signal ends the iteration quietly.
   */
  async *events(request: WatchRequest): AsyncGenerator<WatchEvent> {
    const response = await this.open(request);
    const stall = new StallTimer(request.idleTimeoutMs, () =>
      response.destroy(new WatchStalledError(`no event or bookmark for ${request.idleTimeoutMs} ms`)),
    );
    const lines = new LineSplitter();
    try {
      for await (const chunk of response) {
        for (const line of lines.push(chunk as Buffer)) {
          const text = line.trim();
          if (text.length === 0) continue;
          // Only a whole event proves the watch alive: bytes that never complete a line do not.
          stall.reset();
          yield decodeEvent(text, request.target);
        }
      }
      const last = lines.rest().trim();
      if (last.length > 0) yield decodeEvent(last, request.target);
    } catch (error) {
      if (request.signal.aborted) return;
      if (error instanceof WatchStalledError) throw error;
      throw new KubeRequestError(request.target, error);
    } finally {
      stall.stop();
      response.destroy();
    }
  }

  /**
   * Reads a LIST response as it arrives, handing each item to `onItem` (parsed, not yet validated) before the next one
   * is read, so the whole body and all its raw objects are never held at once; returns the list's envelope (its
   * `kind`, `apiVersion` and `metadata`, with `items` empty). Throws as `events` does: `KubeApiError` for a non-200
   * answer, `WatchStalledError` when no byte came for `idleTimeoutMs`, `KubeRequestError` for transport failures and
   * bodies that are not a list. `items` tunes how the items are cut (bounds; leaving out managedFields).
   */
  async list(
    request: WatchRequest,
    onItem: (raw: unknown) => void,
    items: ListItemSplitterOptions = {},
  ): Promise<unknown> {
    const response = await this.open(request);
    const stall = new StallTimer(request.idleTimeoutMs, () =>
      response.destroy(new WatchStalledError(`no byte of the list for ${request.idleTimeoutMs} ms`)),
    );
    const splitter = new ListItemSplitter(items);
    try {
      // `for await`, not a `data` listener: the API server writes ~4 KB chunks, and each `read()` of the iterator hands
      // over every chunk buffered since the last turn in one piece; a listener called per chunk cost the reader more
      // (docs/design/controller-kit.md).
      for await (const chunk of response) {
        stall.reset();
        for (const item of splitter.push(chunk as Buffer)) onItem(decodeJSON(item, 'list item', request.target));
      }
      return decodeJSON(splitter.end(), 'list envelope', request.target);
    } catch (error) {
      if (error instanceof WatchStalledError || error instanceof KubeRequestError) throw error;
      throw new KubeRequestError(request.target, error);
    } finally {
      stall.stop();
      response.destroy();
    }
  }

  /** Closes idle keep-alive sockets. */
  close(): void {
    this.agent.destroy();
  }

  private async open(request: WatchRequest): Promise<http.IncomingMessage> {
    await requestThrottleFor(this.kubeConfig)?.wait(request.signal);
    const options: https.RequestOptions = {};
    try {
      await this.kubeConfig.applyToHTTPSOptions(options);
    } catch (error) {
      throw new KubeRequestError(request.target, error);
    }
    const url = new URL(this.server.toString());
    url.pathname = `${url.pathname.replace(/\/$/, '')}${request.path}`;
    for (const [key, value] of Object.entries(request.query)) url.searchParams.set(key, value);
    const send = url.protocol === 'http:' ? http.request : https.request;
    const headers: http.OutgoingHttpHeaders = { Accept: 'application/json' };
    for (const [key, value] of Object.entries(options.headers ?? {})) {
      if (value !== undefined) headers[key] = value;
    }

    return new Promise<http.IncomingMessage>((resolve, reject) => {
      const req = send(
        url,
        {
          method: 'GET',
          headers,
          agent: this.useClientNodeAgent ? options.agent : this.agent,
          ...credentialOptions(options),
          signal: request.signal,
          // Until the response headers arrive the idle timer is not running; bound the wait for them too.
          timeout: request.openTimeoutMs,
        },
        (response) => {
          req.setTimeout(0);
          if (response.statusCode === 200) {
            resolve(response);
            return;
          }
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () =>
            reject(
              new KubeApiError(response.statusCode ?? 0, Buffer.concat(chunks).toString('utf8'), request.target, {
                retryAfterSeconds: parseRetryAfterHeader(response.headers['retry-after']),
              }),
            ),
          );
          response.on('error', (error) => reject(new KubeRequestError(request.target, error)));
        },
      );
      req.on('timeout', () => req.destroy(new WatchStalledError(`no response within ${request.openTimeoutMs} ms`)));
      req.on('error', (error) =>
        reject(error instanceof WatchStalledError ? error : new KubeRequestError(request.target, error)),
      );
      req.end();
    });
  }
}

function decodeJSON(text: string, what: string, target: RequestTarget): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new KubeRequestError(target, new Error(`undecodable ${what}: ${String(error)}`));
  }
}

function decodeEvent(line: string, target: RequestTarget): WatchEvent {
  const value = decodeJSON(line, 'watch event', target);
  const parsed = watchEventSchema.safeParse(value);
  if (!parsed.success) {
    throw new KubeRequestError(target, new Error(`malformed watch event: ${parsed.error.message}`));
  }
  return parsed.data;
}

class StallTimer {
  private timer: NodeJS.Timeout;

  constructor(timeoutMs: number, onStall: () => void) {
    this.timer = setTimeout(onStall, timeoutMs);
  }

  reset(): void {
    this.timer.refresh();
  }

  stop(): void {
    clearTimeout(this.timer);
  }
}
