import { setTimeout as delay } from 'node:timers/promises';
import { asKubeApiError, type KubeApiError } from '@tally-ipam/controller-kit';

/** Retries `attempt` until it stops throwing; after `timeoutMs` fails with the last error. */
export async function eventually<T>(
  what: string,
  attempt: () => Promise<T>,
  { timeoutMs = 30_000, intervalMs = 100 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (Date.now() > deadline) {
        throw new Error(
          `${what}: still failing after ${timeoutMs} ms: ${error instanceof Error ? error.message : String(error)}`,
          {
            cause: error,
          },
        );
      }
    }
    await delay(intervalMs);
  }
}

/** The API server's refusal of `action`; throws if the action succeeded or failed without an API error. */
export async function refusal(action: Promise<unknown>): Promise<KubeApiError> {
  const outcome = await action.then(
    () => undefined,
    (error: unknown) => error,
  );
  const apiError = asKubeApiError(outcome);
  if (!apiError) throw new Error(`expected the API server to refuse the request, got ${String(outcome)}`);
  return apiError;
}
