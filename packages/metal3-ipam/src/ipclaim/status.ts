import type { Client } from '@tally-ipam/controller-kit/client';
import type { ReconcileContext, Result } from '@tally-ipam/controller-kit/controller';
import { clipMessage } from '../pool-spec.js';
import { METAL3_CLAIM_RESOURCE, type StoredMetal3Claim } from '../resources.js';

/** What a reconcile writes to an IPClaim's `/status`: an observation, never read for a decision. */
export interface ClaimStatus {
  readonly address?: { readonly name: string; readonly namespace: string | undefined };
  readonly errorMessage: string | null;
}

/** Reports why the claim is not served in `status.errorMessage` (clipped to the CRD's bound) and ends the reconcile. */
export async function fail(
  client: Client,
  claim: StoredMetal3Claim,
  message: string,
  context: ReconcileContext,
): Promise<Result> {
  const clipped = clipMessage(message);
  context.logger.info({ error: clipped }, 'IPClaim not served');
  await writeStatus(client, claim, { errorMessage: clipped }, context);
  return {};
}

/** Merge-patches `/status` unless it already says this. */
export async function writeStatus(
  client: Client,
  claim: StoredMetal3Claim,
  status: ClaimStatus,
  context: ReconcileContext,
): Promise<void> {
  const current = claim.status;
  const sameAddress =
    status.address === undefined ||
    (current?.address?.name === status.address.name && current.address.namespace === status.address.namespace);
  const sameError = (current?.errorMessage ?? null) === status.errorMessage;
  if (sameAddress && sameError) return;
  await client.mergePatch(
    METAL3_CLAIM_RESOURCE,
    { namespace: claim.metadata.namespace, name: claim.metadata.name },
    { status },
    { subresource: 'status', signal: context.signal },
  );
}
