import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

export interface TlsIdentity {
  readonly caPem?: string;
  readonly certPem?: string;
  readonly keyPem?: string;
  /** Skip server verification: only for processes with self-signed serving certs we do not control (KCM). */
  readonly insecure?: boolean;
}

export interface HttpResponse {
  readonly status: number;
  readonly body: string;
}

/** One small HTTP(S) GET with a client identity, for health probes during startup. */
export function httpGet(url: string, tls: TlsIdentity = {}, timeoutMs = 2_000): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const options = {
      method: 'GET',
      timeout: timeoutMs,
      ca: tls.caPem,
      cert: tls.certPem,
      key: tls.keyPem,
      rejectUnauthorized: !tls.insecure,
      agent: false as const,
    };
    const request = target.protocol === 'https:' ? httpsRequest(target, options) : httpRequest(target, options);
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
      );
      response.on('error', reject);
    });
    request.on('timeout', () => request.destroy(new Error(`GET ${url} timed out after ${timeoutMs} ms`)));
    request.on('error', reject);
    request.end();
  });
}
