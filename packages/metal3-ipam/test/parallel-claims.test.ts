/**
 * Many IPClaims of one IPPool reconciled in parallel by one process. Every hold this process won is in the overlay of
 * its own writes from its answer on (`AssumedObjects` over the ledger entry view), however far the ledger informer
 * lags; so no claim chooses an address the process has already won, and a hold is refused only when another claim's
 * hold of the same address was still in flight when the claim chose. The refused holds are bounded by what the
 * reconciles can do, not by how fast the informer is.
 */
import { describe, expect, it } from 'vitest';
import { METAL3_CLAIM_RESOURCE } from '../src/index.js';
import {
  addressesOf,
  createClaim,
  createPool,
  ledgerEntries,
  type RunningMetal3,
  startMetal3,
  useMetal3TestFile,
  waitFor,
} from './support.js';

const CLAIMS = 60;
const file = useMetal3TestFile();

/**
 * Starts a process with `concurrency` reconciles at once, creates a pool of 100 addresses in `block` (e.g. `10.72.0`)
 * and `CLAIMS` IPClaims at once, and waits until every claim is served and the overlay holds nothing the view lacks.
 */
async function serveAtOnce(concurrency: number, block: string): Promise<RunningMetal3> {
  const namespace = await file.namespaces.create(`parallel-${concurrency}`);
  const process = await startMetal3({ namespace, concurrency, name: `parallel-${concurrency}` });
  file.running.push(process);
  await createPool(file.client, namespace, 'pool', {
    namePrefix: 'parallel',
    pools: [{ start: `${block}.10`, end: `${block}.109` }],
    prefix: 24,
  });
  await Promise.all(
    Array.from({ length: CLAIMS }, (_, index) => createClaim(file.client, namespace, `claim-${index}`, 'pool')),
  );
  await waitFor(
    `${CLAIMS} IPClaims served`,
    async () => {
      const claims = (await file.client.list(METAL3_CLAIM_RESOURCE, { namespace })).items;
      const served = claims.filter((claim) => claim.status?.address?.name).length;
      return served === CLAIMS && (await addressesOf(file.client, namespace)).length === CLAIMS;
    },
    { timeoutMs: 150_000 },
  );
  // No TTL: an assumed entry leaves once the entry view shows it (or its removal).
  await waitFor('the overlay of own writes to drain into the entry view', () =>
    process.assumedEntries.pending().every((entry) => !entry.spec.address.startsWith(`${block}.`)),
  );
  const addresses = (await addressesOf(file.client, namespace)).map((address) => address.spec.address ?? '');
  const entries = (await ledgerEntries(file.client)).filter((entry) => entry.address.startsWith(`${block}.`));
  expect(new Set(addresses).size).toBe(CLAIMS);
  expect(entries.map((entry) => entry.address).sort()).toEqual([...addresses].sort());
  return process;
}

describe('IPClaims of one IPPool reconciled in parallel', () => {
  it.each([4, 10])(
    '%i at a time: no choice misses an own won hold; refused holds ≤ claims × (concurrency − 1)',
    async (concurrency) => {
      const process = await serveAtOnce(concurrency, concurrency === 4 ? '10.72.0' : '10.73.0');
      // Read your own writes: a hold of an address this process won a turn earlier is never even tried.
      expect(process.refusedAfterOwnWin()).toBe(0);
      // A refusal of address X to claim B is charged to the hold that won X: it was in flight when B chose (else the
      // overlay or the view showed it), the other reconciles then are at most concurrency − 1, and each puts X among the
      // addresses it lost. Every claim wins one hold (no IPAddress name is taken by a foreign claim here).
      expect(process.refusedHolds()).toBeLessThanOrEqual(CLAIMS * (concurrency - 1));
    },
  );
});
