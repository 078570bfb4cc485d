import { type RequestOptions, request } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

/** One series of kube-apiserver's `apiserver_request_total` counter. */
export interface RequestSeries {
  /** `GET` (one object), `LIST`, `WATCH`, `POST`, `PATCH`, `PUT`, `DELETE`, … */
  readonly verb: string;
  readonly group: string;
  readonly resource: string;
  /** `status` for `…/status`; empty for the object itself. */
  readonly subresource: string;
  /** The HTTP status code the API server answered. */
  readonly code: string;
  readonly count: number;
}

/** A /metrics body larger than this is not a kube-apiserver we started; refuse it rather than buffer it all. */
const MAX_METRICS_BYTES = 64 * 1024 * 1024;
const METRICS_TIMEOUT_MS = 30_000;

const SERIES_LINE = /^apiserver_request_total\{([^}]*)\} ([0-9.e+]+)$/;
const LABEL = /([a-z_]+)="([^"]*)"/g;

/**
 * Reads the API server's own request counters (`apiserver_request_total`) from its /metrics endpoint with the
 * kubeconfig's credentials. The counter has no label naming the client, so a difference of two readings is only the
 * provider's on an API server nobody else uses.
 */
export async function readRequestCounters(kubeConfig: KubeConfig): Promise<RequestSeries[]> {
  const server = new URL(kubeConfig.getCurrentCluster()?.server ?? '');
  const options: RequestOptions = {
    host: server.hostname,
    port: server.port,
    path: '/metrics',
    timeout: METRICS_TIMEOUT_MS,
  };
  await kubeConfig.applyToHTTPSOptions(options);
  const body = await new Promise<string>((resolve, reject) => {
    const sent = request(options, (response) => {
      if (response.statusCode !== 200) {
        response.resume();
        reject(new Error(`GET ${server.origin}/metrics answered ${response.statusCode}: expected 200`));
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      response.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_METRICS_BYTES) {
          response.destroy(new Error(`GET ${server.origin}/metrics: body larger than ${MAX_METRICS_BYTES} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      response.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      response.on('error', reject);
    });
    sent.on('timeout', () =>
      sent.destroy(new Error(`GET ${server.origin}/metrics: no answer within ${METRICS_TIMEOUT_MS} ms`)),
    );
    sent.on('error', reject);
    sent.end();
  });
  return parseRequestCounters(body);
}

/** The `apiserver_request_total` series of a Prometheus text exposition. */
export function parseRequestCounters(exposition: string): RequestSeries[] {
  const series: RequestSeries[] = [];
  for (const line of exposition.split('\n')) {
    const match = SERIES_LINE.exec(line);
    if (!match) continue;
    const labels = new Map([...(match[1] ?? '').matchAll(LABEL)].map((label) => [label[1] ?? '', label[2] ?? '']));
    series.push({
      verb: labels.get('verb') ?? '',
      group: labels.get('group') ?? '',
      resource: labels.get('resource') ?? '',
      subresource: labels.get('subresource') ?? '',
      code: labels.get('code') ?? '',
      count: Number(match[2]),
    });
  }
  return series;
}

function seriesKey(series: RequestSeries): string {
  return [series.verb, series.group, series.resource, series.subresource, series.code].join(' ');
}

/** What the API server counted between two readings (series that did not grow are left out). */
export function requestsBetween(before: readonly RequestSeries[], after: readonly RequestSeries[]): RequestSeries[] {
  const earlier = new Map(before.map((series) => [seriesKey(series), series.count]));
  return after
    .map((series) => ({ ...series, count: series.count - (earlier.get(seriesKey(series)) ?? 0) }))
    .filter((series) => series.count > 0);
}

/** `VERB resource[/subresource][ code]` (the code only when it is not 2xx), e.g. `PATCH ipaddressclaims/status`. */
export function requestTarget(series: RequestSeries): string {
  const failed = series.code.startsWith('2') ? '' : ` ${series.code}`;
  return `${series.verb} ${series.resource}${series.subresource ? `/${series.subresource}` : ''}${failed}`;
}

/** Sums requests by `requestTarget`, largest first. */
export function requestsByTarget(requests: readonly RequestSeries[]): Map<string, number> {
  const totals = new Map<string, number>();
  for (const series of requests) {
    const key = requestTarget(series);
    totals.set(key, (totals.get(key) ?? 0) + series.count);
  }
  return new Map([...totals].sort(([, a], [, b]) => b - a));
}

export function sumRequests(requests: readonly RequestSeries[]): number {
  return requests.reduce((sum, series) => sum + series.count, 0);
}
