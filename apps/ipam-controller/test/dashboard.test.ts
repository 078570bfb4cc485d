import { readFile } from 'node:fs/promises';
import { type RequestOptions, request } from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';
import { asKubeApiError, Client, type ResourceKind } from '@tally-ipam/controller-kit';
import { poolWebhookConfiguration, poolWebhookName } from '@tally-ipam/ipam-provider';
import { createServingCertDir, type ServingCertDir } from '@tally-ipam/testenv';
import { createTestNamespace, type TestNamespace, testEnv } from '@tally-ipam/testenv/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { LEADER_ELECTION_ID } from '../src/app-flags.js';
import { type ControllerProcess, servingPort, startControllerWithWebhooks } from './controller-process.js';
import { type ExportedSeries, exportedSeries, missingNames } from './dashboard-promql.js';
import { ADDRESSES, CLAIMS, CLUSTERS, claim, cluster, eventually, field, ipPool, POOLS } from './support.js';

const DASHBOARD = new URL('../config/grafana/tally-ipam-dashboard.json', import.meta.url);
/** Labels Prometheus adds to every series at scrape time: a query may group or match by them. */
const TARGET_LABELS = ['instance', 'job'];
const WEBHOOK_CONFIGURATIONS: ResourceKind = {
  apiVersion: 'admissionregistration.k8s.io/v1',
  kind: 'ValidatingWebhookConfiguration',
  plural: 'validatingwebhookconfigurations',
  namespaced: false,
};

const Target = z.object({ refId: z.string().min(1), expr: z.string().min(1) });
const Panel = z.object({
  id: z.int(),
  type: z.string(),
  title: z.string().min(1),
  gridPos: z.object({ h: z.int(), w: z.int().min(1).max(24), x: z.int().min(0).max(23), y: z.int().min(0) }),
  // Every panel reads the data source the dashboard's variable picks (Grafana's syntax, not a template literal).
  // biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's variable syntax
  datasource: z.object({ type: z.literal('prometheus'), uid: z.literal('${datasource}') }).optional(),
  targets: z.array(Target).optional(),
});
const Variable = z.object({
  name: z.string(),
  type: z.string(),
  query: z.union([z.string(), z.object({ query: z.string() })]),
});
const Dashboard = z.object({
  uid: z.string().min(1),
  title: z.string().min(1),
  panels: z.array(Panel).min(1),
  templating: z.object({ list: z.array(Variable) }),
});
type Dashboard = z.infer<typeof Dashboard>;

/** Every query of the dashboard, named by where it is: panel targets and `label_values(selector, label)` variables. */
function dashboardQueries(dashboard: Dashboard): { where: string; expr: string }[] {
  const queries = dashboard.panels.flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({ where: `panel "${panel.title}" ${target.refId}`, expr: target.expr })),
  );
  for (const variable of dashboard.templating.list.filter((v) => v.type === 'query')) {
    const text = typeof variable.query === 'string' ? variable.query : variable.query.query;
    const labelValues = /^label_values\((.*),\s*([a-zA-Z_][a-zA-Z0-9_]*)\)$/.exec(text);
    if (!labelValues?.[1] || !labelValues[2])
      throw new Error(`variable ${variable.name}: query ${text} is not label_values(...)`);
    // The label a variable lists must be one the selector's series carry: checked as a grouping label.
    queries.push({ where: `variable ${variable.name}`, expr: `sum by (${labelValues[2]}) (${labelValues[1]})` });
  }
  return queries;
}

/** kube-apiserver's own /metrics, read with the kubeconfig's credentials (the denials panel's series live there). */
async function apiServerMetrics(kubeConfig: KubeConfig): Promise<string> {
  const server = new URL(kubeConfig.getCurrentCluster()?.server ?? '');
  const options: RequestOptions = { host: server.hostname, port: server.port, path: '/metrics', timeout: 30_000 };
  await kubeConfig.applyToHTTPSOptions(options);
  return new Promise<string>((resolve, reject) => {
    const sent = request(options, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        response.statusCode === 200
          ? resolve(Buffer.concat(chunks).toString('utf8'))
          : reject(new Error(`GET ${server.origin}/metrics answered ${response.statusCode}`)),
      );
      response.on('error', reject);
    });
    sent.on('timeout', () => sent.destroy(new Error(`GET ${server.origin}/metrics: no answer within 30 s`)));
    sent.on('error', reject);
    sent.end();
  });
}

/**
 * The Grafana dashboard's queries against what the controller really exports: the built executable runs against the
 * API server with leader election and its webhooks, serves claims until its pool is exhausted, releases one, and has a
 * pool change denied; then every metric name, label matcher and grouping label of every panel must be among the
 * series its /metrics (the denials panel: the API server's) serves.
 */
describe('the Grafana dashboard (config/grafana/tally-ipam-dashboard.json)', () => {
  let namespace: TestNamespace;
  let client: Client;
  let controller: ControllerProcess;
  let certs: ServingCertDir | undefined;
  let metricsPort = 0;
  let webhookPort = 0;
  let configurationName = '';
  const pool = { kind: 'TallyIPPool', name: 'dashboard' };

  beforeAll(async () => {
    const env = testEnv();
    client = new Client(env.kubeConfig, { fieldManager: 'dashboard-test' });
    namespace = await createTestNamespace(env.kubeConfig, 'dashboard');
    certs = await createServingCertDir('dashboard-webhook');
    await client.create(CLUSTERS, cluster(namespace.name, 'workload'));
    // .0 is the /24's network address: three addresses to hand out.
    await client.create(POOLS, ipPool(namespace.name, pool.name, { addresses: ['10.201.0.0/30'], prefix: 24 }));
    ({ controller, webhookPort } = await startControllerWithWebhooks(
      [
        '--kubeconfig',
        env.kubeconfigPath,
        '--namespace',
        namespace.name,
        '--leader-elect',
        '--leader-election-namespace',
        namespace.name,
        '--metrics-bind-address=127.0.0.1:0',
        '--health-probe-bind-address=127.0.0.1:0',
      ],
      certs.path,
    ));
    metricsPort = await servingPort(controller, 'metrics');
  });

  afterAll(async () => {
    if (configurationName) await client?.delete(WEBHOOK_CONFIGURATIONS, { name: configurationName }).catch(() => {});
    if (controller && controller.child.exitCode === null) await controller.stop('SIGKILL');
    await namespace?.delete();
    await certs?.remove();
  });

  it('names only metrics and labels the running controller exports', async () => {
    // Three claims take the pool's three addresses; a fourth is refused by the full pool.
    const bound = async (name: string): Promise<string> =>
      eventually(`${name} bound`, async () => {
        const object = await client.get(CLAIMS, { namespace: namespace.name, name });
        const address = field(object, 'status', 'addressRef', 'name');
        if (typeof address !== 'string') throw new Error(`${name} has no addressRef yet`);
        return address;
      });
    for (const name of ['m-0', 'm-1', 'm-2']) {
      await client.create(CLAIMS, claim(namespace.name, name, pool, 'workload'));
    }
    const held = await Promise.all(['m-0', 'm-1', 'm-2'].map(bound));
    await client.create(CLAIMS, claim(namespace.name, 'm-3', pool, 'workload'));
    const scrape = async (): Promise<ExportedSeries> =>
      exportedSeries(await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text());
    const has = (series: ExportedSeries, metric: string, label: string, value: string): boolean =>
      series.get(metric)?.get(label)?.has(value) === true;
    await eventually('m-3 refused by the full pool', async () => {
      if (!has(await scrape(), 'tally_ipam_allocations_total', 'result', 'exhausted'))
        throw new Error('not counted yet');
    });
    expect(held).toHaveLength(3);

    // A pool change the webhook denies: shrinking the pool under its IPAddresses (a dry run, so nothing changes).
    configurationName = `dashboard-webhook-${namespace.name}`;
    const configuration = poolWebhookConfiguration({
      name: configurationName,
      client: { baseUrl: `https://127.0.0.1:${webhookPort}`, caBundlePem: certs?.caPem ?? '' },
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace.name } },
    });
    await client.create(WEBHOOK_CONFIGURATIONS, { ...configuration, metadata: { name: configurationName } });
    await eventually('the webhook to deny shrinking the pool', async () => {
      const current = await client.get(POOLS, { namespace: namespace.name, name: pool.name });
      const spec = { ...(field(current, 'spec') as object), addresses: ['10.201.0.3'] };
      const outcome = await client.update(POOLS, { ...current, spec }, { dryRun: 'All' }).then(
        () => undefined,
        (error: unknown) => error,
      );
      const refusal = asKubeApiError(outcome)?.serverMessage ?? '';
      if (!refusal.includes(poolWebhookName('TallyIPPool')))
        throw new Error(`not denied by the webhook yet: ${refusal}`);
      return refusal;
    });

    // A release: m-0's address goes back to the pool, and m-3 gets it.
    await client.delete(CLAIMS, { namespace: namespace.name, name: 'm-0' });
    await bound('m-3');
    await eventually('m-0 gone', async () => {
      const gone = await client.get(ADDRESSES, { namespace: namespace.name, name: 'm-0' }).then(
        () => false,
        (error: unknown) => asKubeApiError(error)?.statusCode === 404,
      );
      if (!gone) throw new Error('the IPAddress of m-0 is still there');
    });

    // The series the run must have produced, read until the controller has them all.
    const controllerSeries = await eventually('the run in the controller metrics', async () => {
      const series = await scrape();
      const missing = [
        has(series, 'tally_ipam_releases_total', 'kind', 'TallyIPPool') ? [] : ['a release'],
        has(series, 'leader_election_master_status', 'name', LEADER_ELECTION_ID) ? [] : ['the leader status'],
        series.has('controller_runtime_webhook_latency_seconds_count') ? [] : ['a webhook request'],
      ].flat();
      if (missing.length > 0) throw new Error(`not exported yet: ${missing.join(', ')}`);
      return series;
    });
    const apiServerSeries = await eventually('the denial in the API server metrics', async () => {
      const series = exportedSeries(await apiServerMetrics(testEnv().kubeConfig));
      const names = series.get('apiserver_admission_webhook_rejection_count')?.get('name');
      if (!names?.has(poolWebhookName('TallyIPPool'))) throw new Error('no rejection of the pool webhook counted yet');
      return series;
    });

    const dashboard = Dashboard.parse(JSON.parse(await readFile(DASHBOARD, 'utf8')));
    const queries = dashboardQueries(dashboard);
    // The API server's series (the denials) are checked against its page, all others against the controller's.
    const exportedFor = (expr: string): ExportedSeries =>
      /\bapiserver_/.test(expr) ? apiServerSeries : controllerSeries;
    const problems = queries.flatMap(({ where, expr }) =>
      missingNames(expr, exportedFor(expr), TARGET_LABELS).map((problem) => `${where}: ${problem}`),
    );
    expect(problems).toEqual([]);

    // What the dashboard is for: each family is on some panel.
    const all = queries.map((query) => query.expr).join('\n');
    for (const family of [
      'tally_ipam_pool_addresses',
      'tally_ipam_allocations_total',
      'tally_ipam_allocation_duration_seconds_bucket',
      'controller_runtime_reconcile_errors_total',
      'leader_election_master_status',
      'controller_runtime_webhook_latency_seconds_bucket',
      'apiserver_admission_webhook_rejection_count',
    ]) {
      expect(all, family).toContain(family);
    }
    expect(new Set(dashboard.panels.map((panel) => panel.id)).size).toBe(dashboard.panels.length);
  });
});
