import { type KubeConfig, Watch } from '@kubernetes/client-node';
import { ADDRESS_RESOURCE, type StoredAddress } from '@tally-ipam/api-types';
import type { Client } from '@tally-ipam/controller-kit/client';
import { canonical } from './providers.js';

/** Two IPAddresses holding the same address of the same pool at one moment. */
export interface DoubleHolding {
  readonly address: string;
  readonly pool: string;
  readonly holders: readonly [string, string];
}

export interface AddressWatch {
  /** Every moment the watch saw one address held twice (it should never happen). */
  readonly doubles: readonly DoubleHolding[];
  /** How many IPAddress events were seen, to show the watch was alive. */
  events(): number;
  stop(): void;
}

function poolOf(address: StoredAddress): string {
  const { kind, name } = address.spec.poolRef;
  return `${kind}/${name}`;
}

/**
 * Watches the IPAddresses of a namespace for the whole scenario and records every moment two of them hold the same
 * address of the same pool. Each (re)start lists first and rebuilds its view from that list, then watches from the
 * list's resourceVersion, so the view is always the API server's, in the API server's order.
 */
export function watchAddresses(kc: KubeConfig, client: Client, namespace: string): AddressWatch {
  const doubles: DoubleHolding[] = [];
  const live = new Map<string, { pool: string; address: string }>();
  let events = 0;
  let stopped = false;
  let abort: (() => void) | undefined;

  const hold = (address: StoredAddress): void => {
    const entry = { pool: poolOf(address), address: canonical(address.spec.address) };
    for (const [name, other] of live) {
      if (name !== address.metadata.name && other.pool === entry.pool && other.address === entry.address) {
        doubles.push({ ...entry, holders: [name, address.metadata.name] });
      }
    }
    live.set(address.metadata.name, entry);
  };

  const start = async (): Promise<void> => {
    while (!stopped) {
      try {
        const list = await client.list(ADDRESS_RESOURCE, { namespace });
        live.clear();
        for (const address of list.items) hold(address);
        const done = new Promise<void>((resolve) => {
          void new Watch(kc)
            .watch(
              `/apis/ipam.cluster.x-k8s.io/v1beta2/namespaces/${namespace}/ipaddresses`,
              { resourceVersion: list.resourceVersion, allowWatchBookmarks: true },
              (type: string, object: unknown) => {
                if (type === 'BOOKMARK' || type === 'ERROR') return;
                const parsed = ADDRESS_RESOURCE.schema.safeParse(object);
                if (!parsed.success) return;
                events++;
                if (type === 'DELETED') live.delete(parsed.data.metadata.name);
                else hold(parsed.data);
              },
              () => resolve(),
            )
            .then(
              (request) => {
                abort = () => request.abort();
                if (stopped) request.abort();
              },
              () => resolve(),
            );
        });
        await done;
      } catch {
        // The API server restarts nothing here, but a list can fail on a loaded machine: list again.
      }
      if (!stopped) await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };
  void start();
  return {
    doubles,
    events: () => events,
    stop: () => {
      stopped = true;
      abort?.();
    },
  };
}
