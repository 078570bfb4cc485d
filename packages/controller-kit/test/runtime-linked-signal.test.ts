import { getEventListeners } from 'node:events';
import { testEnv } from '@tally-ipam/testenv/vitest';
import { describe, expect, it } from 'vitest';
import { linkedSignal, linkedTimeoutSignal } from '../src/client/linked-signal.js';
import { KubeTransport } from '../src/client/transport.js';

function abortListeners(signal: AbortSignal): number {
  return getEventListeners(signal, 'abort').length;
}

describe('linked signals', () => {
  it('hang any number of children on one listener of the parent, removed with the last child', () => {
    const parent = new AbortController();
    const children = Array.from({ length: 25 }, (_, index) =>
      index % 2 === 0 ? linkedSignal(parent.signal) : linkedTimeoutSignal(parent.signal, 60_000),
    );
    expect(abortListeners(parent.signal)).toBe(1);
    for (const child of children.slice(1)) child.dispose();
    expect(abortListeners(parent.signal)).toBe(1);
    children[0]?.dispose();
    expect(abortListeners(parent.signal)).toBe(0);
    // A new child after the last one left attaches again.
    const again = linkedSignal(parent.signal);
    expect(abortListeners(parent.signal)).toBe(1);
    again.dispose();
    expect(abortListeners(parent.signal)).toBe(0);
  });

  it('abort every live child with the parent, with its reason, and not the disposed ones', () => {
    const parent = new AbortController();
    const live = [linkedSignal(parent.signal), linkedTimeoutSignal(parent.signal, 60_000)];
    const disposed = linkedSignal(parent.signal);
    disposed.dispose();
    parent.abort(new Error('stopping'));
    for (const child of live) {
      expect(child.signal.aborted).toBe(true);
      expect((child.signal.reason as Error).message).toBe('stopping');
      child.dispose();
    }
    expect(disposed.signal.aborted).toBe(false);
    expect(linkedSignal(parent.signal).signal.aborted).toBe(true);
  });

  it('a deadline aborts its own child only', async () => {
    const parent = new AbortController();
    const short = linkedTimeoutSignal(parent.signal, 1);
    const sibling = linkedSignal(parent.signal);
    await new Promise<void>((resolve) => short.signal.addEventListener('abort', () => resolve(), { once: true }));
    expect((short.signal.reason as DOMException).name).toBe('TimeoutError');
    expect(sibling.signal.aborted).toBe(false);
    expect(parent.signal.aborted).toBe(false);
    short.dispose();
    sibling.dispose();
    expect(abortListeners(parent.signal)).toBe(0);
  });

  it('KubeTransport: 30 concurrent requests sharing one signal leave at most one listener on it, none after', async () => {
    const transport = new KubeTransport(testEnv().kubeConfig);
    const shared = new AbortController();
    let most = 0;
    let settled = false;
    // Sampled on every turn of the event loop while the requests are in flight.
    const sampler = (async (): Promise<void> => {
      while (!settled) {
        most = Math.max(most, abortListeners(shared.signal));
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const requests = Array.from({ length: 30 }, () =>
      transport.request({ method: 'GET', path: '/api/v1/namespaces/default', signal: shared.signal }),
    );
    await Promise.all(requests).finally(() => {
      settled = true;
    });
    await sampler;
    expect(most).toBe(1);
    expect(abortListeners(shared.signal)).toBe(0);
    transport.close();
  });
});
