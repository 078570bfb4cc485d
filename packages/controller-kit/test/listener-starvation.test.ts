import http from 'node:http';
import { connect, type Socket } from 'node:net';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_LISTENER_BOUNDS } from '../src/manager/bounded-listener.js';
import { startDiagnosticsServer } from '../src/manager/diagnostics.js';
import { type RunningServer, startMetricsServer, startProbeServer } from '../src/manager/probes.js';
import { waitFor } from './fixtures/core-wait.js';

// The manager's GET servers (probes, metrics, diagnostics) must not be locked out by idle connections: opening a TCP
// connection needs no credentials, and a kubelet whose probes cannot connect restarts the Pod. More idle connections
// than the bound are opened; the probe or scrape must still be answered, and exactly the surplus must have been
// closed, the longest-waiting first. Nothing here depends on timing: the idle connections are never timed out (Node's
// deadlines are seconds away and only ever run past, never waited for), so every close is the eviction's.

const silent = pino({ level: 'silent' });
const MAX = DEFAULT_LISTENER_BOUNDS.maxConnections;
const SURPLUS = 8;

interface Idle {
  readonly socket: Socket;
  closed: boolean;
}

/** Opens a TCP connection and sends nothing; resolves once connected. */
function idle(port: number): Promise<Idle> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port }, () => {
      const held: Idle = { socket, closed: false };
      socket.once('close', () => {
        held.closed = true;
      });
      socket.on('error', () => undefined);
      resolve(held);
    });
    socket.once('error', reject);
  });
}

/** A GET on a fresh connection: its status and body. */
function get(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.get({ host: '127.0.0.1', port, path, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.once('end', () =>
        resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
      );
    });
    request.once('error', reject);
  });
}

describe.each([
  {
    what: 'health probes',
    path: '/healthz',
    start: (): Promise<RunningServer> =>
      startProbeServer({
        address: { host: '127.0.0.1', port: 0 },
        healthz: () => [{ name: 'ping', check: () => undefined }],
        readyz: () => [],
        logger: silent,
      }),
  },
  {
    what: 'metrics',
    path: '/metrics',
    start: (): Promise<RunningServer> =>
      startMetricsServer({ address: { host: '127.0.0.1', port: 0 }, registry: new Registry(), logger: silent }),
  },
  {
    what: 'diagnostics (insecure)',
    path: '/metrics',
    start: (): Promise<RunningServer> =>
      startDiagnosticsServer({
        address: { host: '127.0.0.1', port: 0 },
        registry: new Registry(),
        logger: silent,
        insecure: true,
      }),
  },
])('the $what server against idle connections', ({ path, start }) => {
  const held: Idle[] = [];
  let server: RunningServer | undefined;

  afterEach(async () => {
    for (const connection of held.splice(0)) connection.socket.destroy();
    await server?.close();
    server = undefined;
  });

  it(`answers with ${MAX + SURPLUS} idle connections open, having closed the ${SURPLUS + 1} that waited longest`, async () => {
    server = await start();
    const { port } = server.address;
    // One at a time, so the server accepts them in this order.
    for (let i = 0; i < MAX + SURPLUS; i++) held.push(await idle(port));

    const answer = await get(port, path);
    expect(answer.status).toBe(200);

    // The surplus and then one more (room for the GET's own connection) were closed: the oldest ones.
    const expected = SURPLUS + 1;
    await waitFor(`${expected} idle connections closed`, () => held.filter((c) => c.closed).length >= expected);
    expect(held.map((c) => c.closed)).toEqual(held.map((_, i) => i < expected));
  });
});
