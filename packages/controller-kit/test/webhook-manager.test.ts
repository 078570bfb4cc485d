import { testEnv } from '@tally-ipam/testenv/vitest';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { Manager, type Runnable } from '../src/manager/index.js';
import { allowed, WebhookServer } from '../src/webhook/index.js';
import { createCertDir, createTestCA, issueServingPair } from './fixtures/webhook-certs.js';
import { admissionReview, sendToWebhook } from './fixtures/webhook-client.js';
import { eventually } from './fixtures/webhook-poll.js';

async function httpGet(port: number, path: string): Promise<{ status: number; text: string }> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: response.status, text: await response.text() };
}

describe('WebhookServer under the Manager', () => {
  it('runs as a non-leader runnable, reports readiness on /readyz and exports metrics on /metrics', async () => {
    const ca = await createTestCA();
    const certDir = await createCertDir();
    await certDir.write(await issueServingPair(ca));
    const logger = pino({ level: 'silent' });
    const manager = new Manager({
      kubeConfig: testEnv().kubeConfig,
      name: 'webhook-manager-test',
      logger,
      registry: new Registry(),
      healthProbeBindAddress: '127.0.0.1:0',
      metricsBindAddress: '127.0.0.1:0',
    });
    const server = new WebhookServer({
      host: '127.0.0.1',
      port: 0,
      certDir: certDir.path,
      registry: manager.registry,
      logger,
    });
    server.register('/validate-anything', () => allowed(['seen by the webhook']));
    // The structural contract with the manager: a Runnable that serves on every replica.
    const runnable: Runnable = server;
    expect(runnable.needLeaderElection).toBe(false);
    manager.add(server);
    manager.addReadyzCheck('webhook', server.startedChecker());

    const stop = new AbortController();
    const running = manager.start(stop.signal);
    try {
      const probePort = await eventually('probe server up', async () => {
        const port = manager.healthProbePort;
        if (port === undefined) throw new Error('no probe port yet');
        return port;
      });
      const ready = await eventually('readyz passes', async () => {
        const answer = await httpGet(probePort, '/readyz?verbose');
        if (answer.status !== 200) throw new Error(answer.text);
        return answer.text;
      });
      expect(ready).toContain('[+]webhook ok');

      const port = server.address()?.port ?? 0;
      const answer = await sendToWebhook({
        port,
        path: '/validate-anything',
        caPem: ca.certPem,
        body: JSON.stringify(admissionReview()),
      });
      expect(answer.body).toMatchObject({ response: { allowed: true, warnings: ['seen by the webhook'] } });
      const metrics = await httpGet(manager.metricsPort ?? 0, '/metrics');
      expect(metrics.text).toContain(
        'controller_runtime_webhook_requests_total{webhook="/validate-anything",code="200"} 1',
      );
      expect(metrics.text).toContain(
        'controller_runtime_webhook_latency_seconds_count{webhook="/validate-anything"} 1',
      );
    } finally {
      stop.abort();
      await running;
      await certDir.remove();
    }
    expect(server.started).toBe(false);
    await expect(server.startedChecker()()).rejects.toThrow('has not started yet or is stopping');
  });
});
