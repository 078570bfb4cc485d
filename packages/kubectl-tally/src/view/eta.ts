import { formatDuration } from './duration.js';

/** What the exhaustion estimate is made from: the pool's free count and when its current addresses were created. */
export interface EtaInput {
  readonly free: number;
  /** Creation times (ms since the epoch) of the pool's IPAddresses; only those inside the window count. */
  readonly createdMs: readonly number[];
  readonly nowMs: number;
  readonly windowMs: number;
}

/**
 * When the pool runs out at the recent allocation rate: the IPAddresses created within the last `windowMs` give the
 * rate (count / window), and `free / rate` the time left. Undefined when nothing was allocated within the window (no
 * rate to extrapolate), 0 when nothing is free. Addresses released meanwhile are not seen (they no longer exist), so
 * this is the rate of allocations that are still held: churn does not make a pool look busier than it is.
 */
export function exhaustionEtaMs(input: EtaInput): number | undefined {
  if (input.free <= 0) return 0;
  const since = input.nowMs - input.windowMs;
  const recent = input.createdMs.filter((ms) => ms > since && ms <= input.nowMs).length;
  if (recent === 0) return undefined;
  return (input.free * input.windowMs) / recent;
}

/** The ETA column: `—` without a recent rate, `exhausted` with nothing free, else `~3h12m`. */
export function formatEta(etaMs: number | undefined): string {
  if (etaMs === undefined) return '—';
  if (etaMs === 0) return 'exhausted';
  return `~${formatDuration(etaMs)}`;
}
