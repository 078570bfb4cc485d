import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { loadServingCertificate } from '../src/webhook/cert-watcher.js';
import { allowed, WebhookServer } from '../src/webhook/index.js';
import { type CertDir, createCertDir, createTestCA, issueServingPair } from './fixtures/webhook-certs.js';
import { admissionReview, listeningPort, peerCertificate, sendToWebhook } from './fixtures/webhook-client.js';
import { eventually } from './fixtures/webhook-poll.js';

const silent = pino({ level: 'silent' });

const sameSerial = (left: string, right: string): boolean => left.toLowerCase() === right.toLowerCase();

describe('serving certificate rotation', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function startServer(
    certDir: CertDir,
    certPollIntervalMs: number,
    logger = silent,
    registry = new Registry(),
  ): Promise<number> {
    const server = new WebhookServer({
      host: '127.0.0.1',
      port: 0,
      certDir: certDir.path,
      certPollIntervalMs,
      logger,
      registry,
    });
    server.register('/ok', () => allowed());
    const stop = new AbortController();
    const running = server.start(stop.signal);
    cleanups.push(async () => {
      stop.abort();
      await running;
    });
    return listeningPort(server);
  }

  it('serves a new certificate from the same CA without a restart', async () => {
    const ca = await createTestCA();
    const certDir = await createCertDir();
    cleanups.push(() => certDir.remove());
    const first = await issueServingPair(ca);
    await certDir.write(first);
    // A long poll interval: the file-system watch alone has to notice the rotation.
    const port = await startServer(certDir, 600_000);
    expect(sameSerial((await peerCertificate(port, ca.certPem)).serialNumber, first.serialNumber)).toBe(true);

    const second = await issueServingPair(ca);
    await certDir.write(second);
    await eventually('new certificate served', async () => {
      const served = (await peerCertificate(port, ca.certPem)).serialNumber;
      if (!sameSerial(served, second.serialNumber)) throw new Error(`still serving ${served}`);
    });
    const answer = await sendToWebhook({
      port,
      path: '/ok',
      caPem: ca.certPem,
      body: JSON.stringify(admissionReview()),
    });
    expect(answer.status).toBe(200);
  });

  it('picks up a rotation through the periodic check when file events are not seen', async () => {
    const ca = await createTestCA();
    const certDir = await createCertDir();
    cleanups.push(() => certDir.remove());
    await certDir.write(await issueServingPair(ca));
    const port = await startServer(certDir, 200);
    const next = await issueServingPair(ca);
    // Written in place (no rename), the way some volume plugins update files.
    await writeFile(join(certDir.path, 'tls.key'), next.keyPem);
    await writeFile(join(certDir.path, 'tls.crt'), next.certPem);
    await eventually('rotated certificate served', async () => {
      const served = (await peerCertificate(port, ca.certPem)).serialNumber;
      if (!sameSerial(served, next.serialNumber)) throw new Error(`still serving ${served}`);
    });
  });

  it('keeps serving the current certificate while the files disagree, then takes the next valid pair', async () => {
    const ca = await createTestCA();
    const certDir = await createCertDir();
    cleanups.push(() => certDir.remove());
    const current = await issueServingPair(ca);
    await certDir.write(current);
    const warnings: string[] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => warnings.push(line) });
    const registry = new Registry();
    const port = await startServer(certDir, 100, logger, registry);
    const counter = async (name: string): Promise<number> =>
      (await registry.getSingleMetric(name)?.get())?.values[0]?.value ?? Number.NaN;
    // Every poll re-reads the pair, so only a lower bound is certain here.
    expect(await counter('certwatcher_read_certificate_total')).toBeGreaterThanOrEqual(1);
    expect(await counter('certwatcher_read_certificate_errors_total')).toBe(0);

    const stray = await issueServingPair(ca);
    // A certificate whose key is not on disk: a half-finished rotation.
    await writeFile(join(certDir.path, 'tls.crt'), stray.certPem);
    await expect(loadServingCertificate(join(certDir.path, 'tls.crt'), join(certDir.path, 'tls.key'))).rejects.toThrow(
      'does not belong to the certificate',
    );
    // writeFile is not atomic: a poll may first read a half-written tls.crt and log a "no PEM" warning, so wait for
    // the refusal of the complete mismatched pair itself.
    await eventually('the mismatched pair was tried and refused', async () => {
      const refusal = warnings.find(
        (line) =>
          line.includes('keeping the current webhook serving certificate') &&
          line.includes('does not belong to the certificate'),
      );
      if (refusal === undefined)
        throw new Error(`no refusal of the mismatched pair logged yet (${warnings.length} warnings)`);
    });
    expect(await counter('certwatcher_read_certificate_errors_total')).toBeGreaterThanOrEqual(1);
    expect(sameSerial((await peerCertificate(port, ca.certPem)).serialNumber, current.serialNumber)).toBe(true);

    const final = await issueServingPair(ca);
    await certDir.write(final);
    await eventually('final certificate served', async () => {
      const served = (await peerCertificate(port, ca.certPem)).serialNumber;
      if (!sameSerial(served, final.serialNumber)) throw new Error(`still serving ${served}`);
    });
  });
});
