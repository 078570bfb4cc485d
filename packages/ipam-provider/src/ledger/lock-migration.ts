import { TALLY_ADDRESS_LOCK_KIND, TALLY_GROUP, TALLY_V1ALPHA1_API_VERSION } from '@tally-ipam/api-types';
import { type Client, isConflict, isInvalid, isNotFound } from '@tally-ipam/controller-kit';
import { LOCK_RESOURCE, type StoredLock } from '../resources.js';
import type { AddressLedgers } from './address-ledgers.js';
import { ledgerNameOf } from './ledger-name.js';

export interface LockMigrationResult {
  /** Locks whose allocation is now (or already was) an entry of a ledger. */
  readonly imported: number;
  /** Locks deleted after their import. */
  readonly deleted: number;
}

/** Thrown when the migration may not run yet: a controller of an older version could still create locks. */
export class LockFenceMissingError extends Error {}

/**
 * Moves the allocations of a cluster that still holds TallyAddressLocks into TallyAddressLedgers, without a moment in
 * which an address could be handed out twice:
 * 1. the fence is checked first: the TallyAddressLock CRD of this version refuses every create (`RETIRED_LOCK_RULE`),
 *    so no controller of an older version can take an address behind the ledgers' back. A dry-run create must be
 *    refused; if it is not, the migration stops (and with it every allocation of this process);
 * 2. every lock is imported as a ledger entry with its claim, pool, creation time and release time — an address is
 *    held by its lock, by its entry or by both at every instant;
 * 3. only then are the locks deleted, each with its uid as precondition.
 * The caller allocates nothing before this resolves. A crash anywhere leaves locks that a re-run imports again (an
 * entry of the same claim is kept as it is) and deletes. No lock CRD at all: nothing to migrate.
 */
export async function migrateLocksToLedgers(
  client: Client,
  ledgers: AddressLedgers,
  signal?: AbortSignal,
): Promise<LockMigrationResult> {
  const fence = await probeFence(client, signal);
  if (fence === 'no-lock-crd') return { imported: 0, deleted: 0 };
  if (fence === 'open') throw fenceMissing();
  const locks = (await client.listAll(LOCK_RESOURCE, { signal })).items;
  const results = await Promise.all(locks.map((lock) => importLock(ledgers, lock)));
  const refused = results.flatMap((result, index) => (result ? [] : [locks[index] as StoredLock]));
  if (refused.length > 0) {
    const names = refused
      .slice(0, 5)
      .map((lock) => `${lock.metadata.name} (claim ${lock.spec.claimRef.namespace}/${lock.spec.claimRef.name})`);
    throw new Error(
      `${refused.length} TallyAddressLocks could not be imported, their ledger entries are held by other claims: ` +
        `${names.join(', ')}${refused.length > 5 ? ', …' : ''}; delete the claim that should not hold the address`,
    );
  }
  let deleted = 0;
  for (const lock of locks) {
    try {
      await client.delete(
        LOCK_RESOURCE,
        { name: lock.metadata.name },
        { preconditions: { uid: lock.metadata.uid }, signal },
      );
      deleted += 1;
    } catch (error) {
      if (!isNotFound(error) && !isConflict(error)) throw error;
    }
  }
  return { imported: locks.length, deleted };
}

function fenceMissing(): LockFenceMissingError {
  return new LockFenceMissingError(
    'the TallyAddressLock CRD still accepts creates, so a controller of an older version could allocate behind the ' +
      'ledgers: apply the CRDs of this version (its TallyAddressLock refuses creates) before starting it',
  );
}

/**
 * A dry-run create of a lock under a name no address has (so no existing lock can answer AlreadyExists): only the
 * fence rule refuses it. Nothing is persisted.
 */
async function probeFence(client: Client, signal?: AbortSignal): Promise<'fenced' | 'open' | 'no-lock-crd'> {
  try {
    await client.create(
      LOCK_RESOURCE,
      {
        apiVersion: TALLY_V1ALPHA1_API_VERSION,
        kind: TALLY_ADDRESS_LOCK_KIND,
        metadata: { name: 'tally-fence-probe' },
        spec: {
          address: '0.0.0.0',
          poolRef: { apiGroup: TALLY_GROUP, kind: 'GlobalTallyIPPool', name: 'fence-probe' },
          claimRef: { namespace: 'fence-probe', name: 'fence-probe', uid: 'fence-probe' },
        },
      },
      { dryRun: 'All', signal },
    );
    return 'open';
  } catch (error) {
    if (isInvalid(error)) return 'fenced';
    if (isNotFound(error)) return 'no-lock-crd';
    throw error;
  }
}

async function importLock(ledgers: AddressLedgers, lock: StoredLock): Promise<boolean> {
  const isPrefix = lock.spec.prefix !== undefined;
  const result = await ledgers.submit(
    ledgerNameOf({ address: lock.spec.address, prefix: lock.spec.prefix ?? 0, isPrefix }),
    {
      kind: 'import',
      entry: {
        key: lock.metadata.name,
        address: lock.spec.address,
        ...(isPrefix ? { prefix: lock.spec.prefix } : {}),
        poolRef: lock.spec.poolRef,
        claimRef: lock.spec.claimRef,
        heldSince: lock.metadata.creationTimestamp ?? new Date(0).toISOString(),
        ...(lock.spec.releasedAt === undefined ? {} : { releasedAt: lock.spec.releasedAt }),
      },
    },
  );
  return result.ok;
}
