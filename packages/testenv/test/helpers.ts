import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { ApiException } from '@kubernetes/client-node';

/** PIDs of live processes whose command line mentions `text` (Linux /proc; zombies do not count). */
export function processesMentioning(text: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (cmdline.includes(text) && state !== 'Z') pids.push(Number(entry));
    } catch {
      // The process exited while we looked.
    }
  }
  return pids;
}

/** Whether `pid` is a live (non-zombie) process. */
export function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/**
 * Polls until `condition` holds; throws with `what` when `timeoutMs` passes. For eventual effects of asynchronous
 * controllers (the garbage collector, the watchdog), not for measuring time.
 */
export async function eventually(
  what: string,
  condition: () => Promise<boolean> | boolean,
  timeoutMs = 90_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

/** The HTTP status of a client-node call that is expected to fail. */
export async function statusOf(call: Promise<unknown>): Promise<number> {
  try {
    await call;
    return 200;
  } catch (error) {
    if (error instanceof ApiException) return error.code;
    throw error;
  }
}

/** The `reason` of a Kubernetes Status in an ApiException body (client-node gives the body as a JSON string). */
export function statusReason(error: unknown): string | undefined {
  if (!(error instanceof ApiException)) return undefined;
  const body: unknown = typeof error.body === 'string' ? JSON.parse(error.body) : error.body;
  if (body && typeof body === 'object' && 'reason' in body && typeof body.reason === 'string') return body.reason;
  return undefined;
}
