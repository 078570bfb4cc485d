import { CoreV1Api } from '@kubernetes/client-node';
import { createTestNamespace, type TestNamespace } from '@tally-ipam/testenv';
import { testEnv } from '@tally-ipam/testenv/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WatchConnection, WatchStalledError } from '../src/cache/watch-connection.js';
import { KubeRequestError } from '../src/client/errors.js';
import { FaultProxy } from './fixtures/core-fault-proxy.js';

/**
 * A LIST read as it arrives, broken in each way a stream can break: the connection cut, the stream frozen, the reader
 * failing on an item. Each must end the read with an error; none may end it as a list that seems whole. The list is
 * ~1 MB of ConfigMaps in one namespace, written once and only read by every test, so it arrives in some hundreds of
 * chunks and every fault lands in the middle of it.
 */
const CONFIGMAPS = 60;
const DATA_BYTES = 16_000;
const NAMES = Array.from({ length: CONFIGMAPS }, (_, index) => `list-${String(index).padStart(3, '0')}`);
let ns: TestNamespace;

beforeAll(async () => {
  ns = await createTestNamespace(testEnv().kubeConfig, 'list-read');
  const core = testEnv().kubeConfig.makeApiClient(CoreV1Api);
  for (const name of NAMES) {
    await core.createNamespacedConfigMap({
      namespace: ns.name,
      body: { metadata: { name }, data: { blob: 'x'.repeat(DATA_BYTES) } },
    });
  }
});

afterAll(async () => {
  await ns?.delete();
});

function listRequest(namespace: string, signal: AbortSignal, idleTimeoutMs = 10_000) {
  return {
    path: `/api/v1/namespaces/${namespace}/configmaps`,
    query: {},
    signal,
    idleTimeoutMs,
    openTimeoutMs: 10_000,
    target: { verb: 'list', resource: 'configmaps', namespace },
  };
}

function nameOf(item: unknown): string {
  return (item as { metadata: { name: string } }).metadata.name;
}

/**
 * Where the proxy breaks the list: this many bytes of the server's side of the connection (TLS handshake, headers,
 * then ~16 KB per ConfigMap) make some 15 items, the list's whole ~1 MB about 60. A fixed byte position, not "after the
 * reader saw five": a reader behind on a loaded machine can get the whole list in one read before it saw the fifth.
 */
const BYTES_BEFORE_FAULT = 256 * 1024;

/** Reads the list through the fault proxy, which breaks it `BYTES_BEFORE_FAULT` bytes into the connection. */
async function readBrokenByProxy(
  fault: 'cut' | 'freeze',
  idleTimeoutMs?: number,
): Promise<{ error: unknown; seen: number }> {
  const proxy = await FaultProxy.start(testEnv().kubeConfig.getCurrentCluster()?.server ?? '');
  proxy.faultAfter(BYTES_BEFORE_FAULT, fault);
  const connection = new WatchConnection(proxy.kubeConfigThrough(testEnv().kubeConfig));
  let seen = 0;
  try {
    await connection.list(listRequest(ns.name, new AbortController().signal, idleTimeoutMs), () => {
      seen += 1;
    });
    return { error: undefined, seen };
  } catch (error) {
    return { error, seen };
  } finally {
    connection.close();
    await proxy.stop();
  }
}

describe('WatchConnection.list', () => {
  it('hands over every item in order and returns the envelope without them', async () => {
    const connection = new WatchConnection(testEnv().kubeConfig);
    const names: string[] = [];
    const envelope = await connection.list(listRequest(ns.name, new AbortController().signal), (item) =>
      names.push(nameOf(item)),
    );
    connection.close();
    expect(names).toEqual(NAMES);
    expect(envelope).toMatchObject({
      kind: 'ConfigMapList',
      items: [],
      metadata: { resourceVersion: expect.any(String) },
    });
  });

  it('fails, never returns, when the connection is cut in the middle of the list', async () => {
    const { error, seen } = await readBrokenByProxy('cut');
    expect(error).toBeInstanceOf(KubeRequestError);
    expect(seen).toBeGreaterThanOrEqual(5);
    expect(seen).toBeLessThan(CONFIGMAPS);
  });

  it('fails with a stall when no byte comes for the idle timeout in the middle of the list', async () => {
    const { error, seen } = await readBrokenByProxy('freeze', 1_000);
    expect(error).toBeInstanceOf(WatchStalledError);
    expect(seen).toBeGreaterThanOrEqual(5);
    expect(seen).toBeLessThan(CONFIGMAPS);
  });

  it('stops reading at the item its reader fails on, and says why', async () => {
    const connection = new WatchConnection(testEnv().kubeConfig);
    const names: string[] = [];
    const read = connection.list(listRequest(ns.name, new AbortController().signal), (item) => {
      names.push(nameOf(item));
      if (names.length === 3) throw new Error(`cannot store ${nameOf(item)}`);
    });
    await expect(read).rejects.toThrow(/cannot store list-002/);
    expect(names).toEqual(['list-000', 'list-001', 'list-002']);
    connection.close();
  });

  it('fails when its signal is aborted in the middle of the list', async () => {
    // The rest of the list never comes (the proxy freezes it), so the read can only end by the abort: a whole list
    // arriving in one read before the reader saw the fifth item cannot make it succeed, and an abort that did nothing
    // would end in the idle timeout's WatchStalledError instead.
    const proxy = await FaultProxy.start(testEnv().kubeConfig.getCurrentCluster()?.server ?? '');
    proxy.faultAfter(BYTES_BEFORE_FAULT, 'freeze');
    const connection = new WatchConnection(proxy.kubeConfigThrough(testEnv().kubeConfig));
    const abort = new AbortController();
    let seen = 0;
    const read = connection.list(listRequest(ns.name, abort.signal), () => {
      seen += 1;
      if (seen === 5) abort.abort();
    });
    try {
      await expect(read).rejects.toBeInstanceOf(KubeRequestError);
      expect(seen).toBeGreaterThanOrEqual(5);
      expect(seen).toBeLessThan(CONFIGMAPS);
    } finally {
      connection.close();
      await proxy.stop();
    }
  });
});
