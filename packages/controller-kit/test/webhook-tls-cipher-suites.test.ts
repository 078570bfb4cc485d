import { connect } from 'node:tls';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseManagerFlags } from '../src/manager/flags.js';
import { WebhookServer } from '../src/webhook/index.js';
import { type CertDir, createCertDir, createTestCA, issueServingPair, type TestCA } from './fixtures/webhook-certs.js';
import { listeningPort } from './fixtures/webhook-client.js';

/**
 * `--tls-cipher-suites` applied, not only parsed: a webhook server started with the TLS options the flags produce
 * refuses a TLS 1.2 client offering only a suite outside the list, and completes the handshake with one inside it.
 * The test certificates are ECDSA P-256, so both suites are ECDHE-ECDSA ones; both are in Cluster API's default list,
 * which the server without the flag accepts.
 */

const INSIDE = { flag: 'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256', openssl: 'ECDHE-ECDSA-AES128-GCM-SHA256' };
const OUTSIDE = { flag: 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384', openssl: 'ECDHE-ECDSA-AES256-GCM-SHA384' };

/** A TLS 1.2 handshake offering only `cipher`: the suite agreed on, or the error that ended the handshake. */
function handshake(port: number, caPem: string, cipher: string): Promise<{ cipher: string } | { error: Error }> {
  return new Promise((resolve) => {
    const socket = connect(
      { host: '127.0.0.1', port, ca: caPem, servername: 'localhost', maxVersion: 'TLSv1.2', ciphers: cipher },
      () => {
        const agreed = socket.getCipher().name;
        socket.end();
        resolve({ cipher: agreed });
      },
    );
    socket.once('error', (error) => resolve({ error }));
  });
}

async function startServer(
  certDir: CertDir,
  argv: readonly string[],
  stop: AbortSignal,
): Promise<{ port: number; running: Promise<void> }> {
  const { tls } = parseManagerFlags(argv, { leaderElectionId: 'tally-cipher-test' });
  const server = new WebhookServer({
    host: '127.0.0.1',
    port: 0,
    certDir: certDir.path,
    tls,
    logger: pino({ level: 'silent' }),
  });
  const running = server.start(stop);
  return { port: await listeningPort(server), running };
}

describe('--tls-cipher-suites on the webhook server', () => {
  let ca: TestCA;
  let certDir: CertDir;
  const stop = new AbortController();
  const running: Promise<void>[] = [];
  let restricted: number;
  let unrestricted: number;

  beforeAll(async () => {
    ca = await createTestCA();
    certDir = await createCertDir();
    await certDir.write(await issueServingPair(ca));
    const withFlag = await startServer(certDir, [`--tls-cipher-suites=${INSIDE.flag}`], stop.signal);
    const withoutFlag = await startServer(certDir, [], stop.signal);
    running.push(withFlag.running, withoutFlag.running);
    restricted = withFlag.port;
    unrestricted = withoutFlag.port;
  });

  afterAll(async () => {
    stop.abort();
    await Promise.all(running);
    await certDir?.remove();
  });

  it('refuses a TLS 1.2 client offering only a suite outside the list', async () => {
    const answer = await handshake(restricted, ca.certPem, OUTSIDE.openssl);
    expect('error' in answer ? answer.error.message : `agreed on ${answer.cipher}`).toMatch(/handshake failure/i);
  });

  it('completes the handshake with a suite inside the list', async () => {
    expect(await handshake(restricted, ca.certPem, INSIDE.openssl)).toEqual({ cipher: INSIDE.openssl });
  });

  it('accepts the outside suite when the flag is not given (Cluster API defaults)', async () => {
    expect(await handshake(unrestricted, ca.certPem, OUTSIDE.openssl)).toEqual({ cipher: OUTSIDE.openssl });
  });
});
