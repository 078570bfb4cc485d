import { asKubeApiError, type KubeApiError } from '@tally-ipam/controller-kit';

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
