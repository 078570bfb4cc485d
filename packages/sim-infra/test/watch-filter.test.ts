import { randomBytes } from 'node:crypto';
import { WATCH_FILTER_LABEL } from '@tally-ipam/api-types';
import { Client, type ResourceKind } from '@tally-ipam/controller-kit/client';
import { Manager } from '@tally-ipam/controller-kit/manager';
import { testEnv, withTestNamespace } from '@tally-ipam/testenv/vitest';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  SIM_CLUSTER_RESOURCE,
  SIM_GROUP,
  SIM_MACHINE_POOL_RESOURCE,
  SIM_MACHINE_RESOURCE,
  setupSimInfraProvider,
} from '../src/index.js';
import { eventually } from './support.js';

/** What the filtered provider's reconcilers logged, one record per line (debug level: every reconcile logs). */
interface LogRecord {
  readonly controller?: string;
  readonly namespace?: string;
  readonly name?: string;
  readonly msg?: string;
}

const FILTER = `sim-filter-${randomBytes(4).toString('hex')}`;
const records: LogRecord[] = [];
let client: Client;
let filtered: { stop(): Promise<void> };

beforeAll(async () => {
  client = new Client(testEnv().kubeConfig, { fieldManager: 'sim-infra-tests' });
  const manager = new Manager({
    kubeConfig: testEnv().kubeConfig,
    name: 'sim-watch-filter-test',
    logger: pino({ level: 'debug' }, { write: (line: string) => records.push(JSON.parse(line) as LogRecord) }),
  });
  // One worker per controller: objects are reconciled in the order their events arrive.
  setupSimInfraProvider(manager, { watchFilter: FILTER, concurrency: 1, fieldManager: 'sim-watch-filter-test' });
  const abort = new AbortController();
  const running = manager.start(abort.signal);
  running.catch(() => undefined);
  await manager.elected;
  filtered = {
    async stop() {
      abort.abort();
      await running;
    },
  };
});

afterAll(async () => {
  await filtered?.stop();
  client?.close();
});

/** The filtered provider reconciled this object (its reconcilers log, with the object's name, on every pass). */
function reconciled(namespace: string, name: string): boolean {
  return records.some((record) => record.namespace === namespace && record.name === name);
}

const KINDS: readonly { resource: ResourceKind; kind: string; spec: Record<string, unknown> }[] = [
  { resource: SIM_CLUSTER_RESOURCE, kind: 'SimCluster', spec: {} },
  { resource: SIM_MACHINE_RESOURCE, kind: 'SimMachine', spec: {} },
  { resource: SIM_MACHINE_POOL_RESOURCE, kind: 'SimMachinePool', spec: { template: {} } },
];

describe('a Sim provider started with --watch-filter', () => {
  it('reconciles only SimClusters, SimMachines and SimMachinePools labelled with its value', async () => {
    const ns = await withTestNamespace(undefined, 'sim-filter');
    // Objects without owners: every provider leaves them alone after one look (waiting for the owner) and writes
    // nothing, so no later event can blur the order. The unlabelled one of each kind comes first, by creation and by
    // name (an initial list is sorted by name): a provider that let it through would reconcile it before the labelled
    // one.
    const create = (entry: (typeof KINDS)[number], name: string, labels: Record<string, string>) =>
      client.create(entry.resource, {
        apiVersion: `${SIM_GROUP}/v1alpha1`,
        kind: entry.kind,
        metadata: { name, namespace: ns.name, labels },
        spec: entry.spec,
      });
    for (const entry of KINDS) {
      const base = entry.kind.toLowerCase();
      await create(entry, `${base}-a-unlabelled`, {});
      await create(entry, `${base}-b-other-value`, { [WATCH_FILTER_LABEL]: `${FILTER}-other` });
      await create(entry, `${base}-c-labelled`, { [WATCH_FILTER_LABEL]: FILTER });
    }
    for (const entry of KINDS) {
      const base = entry.kind.toLowerCase();
      await eventually(`${entry.kind} ${base}-c-labelled reconciled`, async () =>
        reconciled(ns.name, `${base}-c-labelled`) ? true : undefined,
      );
      expect(reconciled(ns.name, `${base}-a-unlabelled`)).toBe(false);
      expect(reconciled(ns.name, `${base}-b-other-value`)).toBe(false);
    }

    // Labelling an object brings it in.
    for (const entry of KINDS) {
      const base = entry.kind.toLowerCase();
      await client.mergePatch(
        entry.resource,
        { namespace: ns.name, name: `${base}-a-unlabelled` },
        { metadata: { labels: { [WATCH_FILTER_LABEL]: FILTER } } },
      );
      await eventually(`${entry.kind} ${base}-a-unlabelled reconciled once labelled`, async () =>
        reconciled(ns.name, `${base}-a-unlabelled`) ? true : undefined,
      );
    }
    expect(KINDS.every((entry) => !reconciled(ns.name, `${entry.kind.toLowerCase()}-b-other-value`))).toBe(true);
  });
});
