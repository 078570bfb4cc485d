import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

export interface KubeResponse {
  readonly status: number;
  readonly body: string;
}

export interface KubeRequest {
  readonly method: 'GET' | 'PATCH' | 'POST' | 'PUT' | 'DELETE';
  /** Path and query, e.g. `/apis/apiextensions.k8s.io/v1/customresourcedefinitions`. */
  readonly path: string;
  readonly body?: string;
  readonly contentType?: string;
  readonly timeoutMs?: number;
}

/**
 * A raw request with the KubeConfig's credentials. Used where client-node's typed serializer would lose data: it
 * drops `enum`, `default` and `x-kubernetes-*` from CRD schemas given as plain objects.
 */
export async function kubeRequest(kc: KubeConfig, req: KubeRequest): Promise<KubeResponse> {
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('the KubeConfig has no current cluster');
  // Relative to the server URL, so a server with a path prefix (a proxy) keeps it.
  const url = new URL(
    req.path.replace(/^\//, ''),
    cluster.server.endsWith('/') ? cluster.server : `${cluster.server}/`,
  );
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (req.contentType) headers['Content-Type'] = req.contentType;
  const options: RequestOptions & { headers: Record<string, string> } = {
    method: req.method,
    headers,
    timeout: req.timeoutMs ?? 30_000,
  };
  await kc.applyToHTTPSOptions(options);
  return new Promise((resolve, reject) => {
    const request = url.protocol === 'https:' ? httpsRequest(url, options) : httpRequest(url, options);
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
      );
      response.on('error', reject);
    });
    request.on('timeout', () => request.destroy(new Error(`${req.method} ${url.href} timed out`)));
    request.on('error', (error) =>
      reject(new Error(`${req.method} ${url.href} failed: ${error.message}`, { cause: error })),
    );
    if (req.body !== undefined) request.write(req.body);
    request.end();
  });
}
