import { setTimeout as delay } from 'node:timers/promises';
import type { KubeConfig } from '@kubernetes/client-node';
import { Cache, type Client, type KubeObject } from '@tally-ipam/controller-kit';
import { pino } from 'pino';
import { forEachLimited } from '../test/random.js';
import { CLAIMS, field } from '../test/support.js';
import type { BenchObject } from './contenders.js';

/** Creates in flight for a burst: "at once" within what one client connection pool sensibly sends. */
const CREATORS = 50;

export function percentile(sorted: readonly number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] ?? Number.NaN;
}

export interface Binds {
  /** Claim name → performance.now() when a watch event first showed it bound. */
  readonly at: ReadonlyMap<string, number>;
  /** Resolves once every claim of `names` is bound; rejects after `timeoutMs` with how many were. */
  waitFor(names: ReadonlySet<string>, timeoutMs: number): Promise<void>;
}

/** Records when each claim of `namespace` is first seen bound (`status.addressRef.name`), from a watch. */
export function watchBinds(kubeConfig: KubeConfig, namespace: string, signal: AbortSignal): Binds {
  const at = new Map<string, number>();
  const cache = new Cache({ kubeConfig, logger: pino({ level: 'silent' }) });
  const note = (object: KubeObject): void => {
    if (!at.has(object.metadata.name) && field(object, 'status', 'addressRef', 'name')) {
      at.set(object.metadata.name, performance.now());
    }
  };
  cache.addEventHandler(CLAIMS, { onAdd: note, onUpdate: (_old, object) => note(object) }, { namespace });
  void cache.start(signal);
  return {
    at,
    async waitFor(names, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      const missing = (): number => [...names].filter((name) => !at.has(name)).length;
      while (missing() > 0) {
        if (Date.now() > deadline) {
          throw new Error(`${missing()} of ${names.size} claims not bound after ${timeoutMs / 1000} s`);
        }
        await delay(50);
      }
    },
  };
}

/**
 * Creates the claims, all at once (`CREATORS` in flight) or one every 1/`ratePerSecond` s on a fixed schedule (a
 * late create does not shift the ones after it). Returns when each create was sent.
 */
export async function createClaims(
  client: Client,
  claims: readonly BenchObject[],
  ratePerSecond?: number,
): Promise<Map<string, number>> {
  const sent = new Map<string, number>();
  const create = async (claim: BenchObject): Promise<void> => {
    sent.set(claim.metadata.name, performance.now());
    await client.create(CLAIMS, claim);
  };
  if (ratePerSecond === undefined) {
    await forEachLimited(claims, CREATORS, create);
    return sent;
  }
  const started = performance.now();
  const inFlight: Promise<void>[] = [];
  for (const [index, claim] of claims.entries()) {
    const due = started + (index * 1000) / ratePerSecond;
    const wait = due - performance.now();
    if (wait > 0) await delay(wait);
    inFlight.push(create(claim));
  }
  await Promise.all(inFlight);
  return sent;
}
