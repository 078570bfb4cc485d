import { request } from 'node:https';
import { z } from 'zod';
import { FIELD_MANAGER } from './environment.js';
import { yamlBlocks } from './examples.js';
import type { Kube } from './kube.js';
import type { Page } from './markdown.js';

/**
 * `/metrics` as Prometheus scrapes it from the controller: with the token of the ServiceAccount the operating page
 * binds to `tally-ipam-metrics-reader`, over HTTPS with the controller's own certificate.
 */

const TokenRequest = z.looseObject({ status: z.looseObject({ token: z.string().min(1) }) });

/** Applies the operating page's ServiceAccount and ClusterRoleBinding and returns a token of that account. */
export async function metricsReaderToken(kube: Kube, operatingPage: Page): Promise<string> {
  const block = yamlBlocks(operatingPage).find(
    (entry) => entry.type === 'objects' && entry.objects.some((object) => object.kind === 'ClusterRoleBinding'),
  );
  if (block?.type !== 'objects') throw new Error(`${operatingPage.path} has no ClusterRoleBinding block`);
  for (const object of block.objects) await kube.apply(object, FIELD_MANAGER);
  const account = block.objects.find((object) => object.kind === 'ServiceAccount');
  const path = `/api/v1/namespaces/${account?.metadata.namespace}/serviceaccounts/${account?.metadata.name}/token`;
  const answer = await kube.request('POST', path, {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: { expirationSeconds: 600 },
  });
  return TokenRequest.parse(answer).status.token;
}

export function scrape(port: number, token?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const call = request(
      {
        host: '127.0.0.1',
        port,
        path: '/metrics',
        method: 'GET',
        // The controller's own self-signed certificate, as the operating page says (insecureSkipVerify).
        rejectUnauthorized: false,
        headers: token ? { Authorization: `Bearer ${token}` } : {},
        timeout: 30_000,
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
        response.on('error', reject);
      },
    );
    call.on('timeout', () => call.destroy(new Error('GET /metrics timed out')));
    call.on('error', reject);
    call.end();
  });
}

export interface ServedMetric {
  readonly name: string;
  readonly type: string;
  readonly help: string;
}

/** Every metric of an exposition, from its `# HELP` and `# TYPE` lines (present whether or not it has samples). */
export function servedMetrics(exposition: string): ServedMetric[] {
  const help = new Map<string, string>();
  const type = new Map<string, string>();
  for (const line of exposition.split('\n')) {
    const match = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) ?(.*)$/.exec(line);
    if (!match) continue;
    (match[1] === 'HELP' ? help : type).set(match[2] ?? '', match[3] ?? '');
  }
  return [...type].map(([name, kind]) => ({ name, type: kind, help: help.get(name) ?? '' }));
}
