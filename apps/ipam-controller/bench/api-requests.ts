import { type RequestOptions, request } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

export interface RequestCounts {
  readonly byVerb: Map<string, number>;
  /** `VERB resource` or `VERB resource/subresource`, failures with their code, e.g. `PATCH ipaddressclaims/status`. */
  readonly byTarget: Map<string, number>;
}

const MUTATING_VERBS = new Set(['POST', 'PUT', 'PATCH', 'DELETE', 'DELETECOLLECTION']);

function add(counts: Map<string, number>, key: string, value: number): void {
  counts.set(key, (counts.get(key) ?? 0) + value);
}

/** The API server's Go garbage collector so far: cycles ended, and the runtime's estimate of the CPU they took. */
export interface GcTotals {
  readonly cycles: number;
  readonly cpuSeconds: number;
}

/**
 * `apiserver_request_total` summed by verb and by verb + resource, read from the API server's /metrics with the admin
 * credentials, and its garbage collector's totals (`go_gc_cycles_total_gc_cycles_total`,
 * `go_cpu_classes_gc_total_cpu_seconds_total`; both move when a cycle ends). The API server's requests to itself are
 * included: they are the same in every run (no other workload).
 */
export async function apiRequests(kubeConfig: KubeConfig): Promise<RequestCounts & { readonly gc: GcTotals }> {
  const server = new URL(kubeConfig.getCurrentCluster()?.server ?? '');
  const options: RequestOptions = { host: server.hostname, port: server.port, path: '/metrics' };
  await kubeConfig.applyToHTTPSOptions(options);
  const body = await new Promise<string>((resolve, reject) => {
    request(options, (response) => {
      let text = '';
      response.setEncoding('utf8').on('data', (chunk: string) => {
        text += chunk;
      });
      response.on('end', () => resolve(text)).on('error', reject);
    })
      .on('error', reject)
      .end();
  });
  const byVerb = new Map<string, number>();
  const byTarget = new Map<string, number>();
  const gc = { cycles: 0, cpuSeconds: 0 };
  for (const line of body.split('\n')) {
    if (line.startsWith('go_gc_cycles_total_gc_cycles_total ')) gc.cycles = Number(line.slice(line.indexOf(' ') + 1));
    if (line.startsWith('go_cpu_classes_gc_total_cpu_seconds_total ')) {
      gc.cpuSeconds = Number(line.slice(line.indexOf(' ') + 1));
    }
    if (!line.startsWith('apiserver_request_total{')) continue;
    const verb = /verb="([A-Z]+)"/.exec(line)?.[1] ?? '?';
    const resource = /[{,]resource="([^"]*)"/.exec(line)?.[1] || '-';
    const subresource = /subresource="([^"]*)"/.exec(line)?.[1];
    const code = /code="(\d+)"/.exec(line)?.[1] ?? '?';
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    add(byVerb, verb, value);
    const failed = code.startsWith('2') ? '' : ` ${code}`;
    add(byTarget, `${verb} ${resource}${subresource ? `/${subresource}` : ''}${failed}`, value);
  }
  return { byVerb, byTarget, gc };
}

export function difference(after: Map<string, number>, before: Map<string, number>): Record<string, number> {
  const result: Record<string, number> = {};
  for (const [key, value] of after) {
    const delta = value - (before.get(key) ?? 0);
    if (delta > 0) result[key] = delta;
  }
  return result;
}

export function totalRequests(byVerb: ReadonlyMap<string, number>): number {
  return [...byVerb.values()].reduce((sum, value) => sum + value, 0);
}

/** Creates, updates, patches and deletes: what reaches etcd. */
export function mutatingRequests(byVerb: ReadonlyMap<string, number>): number {
  return [...byVerb].filter(([verb]) => MUTATING_VERBS.has(verb)).reduce((sum, [, value]) => sum + value, 0);
}

/**
 * Writes to one resource by verb, failures included (a 409 costs the API server a request too), from `byTarget`
 * keys such as `PUT tallyaddressledgers` or `POST tallyaddressledgers 409`.
 */
export function writesTo(byTarget: ReadonlyMap<string, number>, resource: string): Map<string, number> {
  const byVerb = new Map<string, number>();
  for (const [key, value] of byTarget) {
    const [verb = '', target = '', code] = key.split(' ');
    if (target !== resource || !MUTATING_VERBS.has(verb)) continue;
    const label = code ? `${verb} ${code}` : verb;
    byVerb.set(label, (byVerb.get(label) ?? 0) + value);
  }
  return byVerb;
}
