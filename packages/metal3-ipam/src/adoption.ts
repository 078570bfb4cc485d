import type { AssumedObjects, KubeObject, SharedInformer, Store } from '@tally-ipam/controller-kit/cache';
import type { Manager } from '@tally-ipam/controller-kit/manager';
import { type AddressLedgers, type Holding, startUpStep } from '@tally-ipam/ledger';
import { assumeHold, ledgerSlot, metal3Entry } from './holdings.js';
import { claimKeyOfAddress, type StoredMetal3Address, type StoredMetal3Claim } from './resources.js';

/**
 * The start-up adoption barrier. When Tally takes over from Metal3's IPAM controller, every allocation lives only in
 * an IPAddress's spec; Tally's own claims read the ledgers, not Metal3 IPAddresses, and a Metal3 claim reads only the
 * IPAddresses of its own pool. So before any allocation of either API, every Metal3 IPAddress of the watched scope is
 * entered into the ledgers for its IPClaim — the entry its claim's first reconcile would write.
 */

export interface Metal3AdoptionDeps {
  readonly addresses: Pick<SharedInformer<StoredMetal3Address>, 'store' | 'whenSynced' | 'hasSynced'>;
  readonly claims: Pick<SharedInformer<StoredMetal3Claim>, 'store' | 'whenSynced' | 'hasSynced'>;
  /** The TallyAddressLedger informer behind `entries`: waited for, so entries already held are not written again. */
  readonly ledgerInformer: Pick<SharedInformer<KubeObject>, 'whenSynced' | 'hasSynced'>;
  /** The ledger entries as holdings, keyed by entry key (`LedgerEntryView.store`). */
  readonly entries: Pick<Store<Holding>, 'get'>;
  readonly ledgers: Pick<AddressLedgers, 'submit' | 'ledger'>;
  /** The overlay over `entries`: each entry written here is assumed, so the first claims' choices see it at once. */
  readonly assumedEntries: Pick<AssumedObjects<Holding>, 'assume' | 'get'>;
  /** A gate of the embedding process (`Metal3IPAMOptions.ledgersComplete`); adoption runs after it. */
  readonly ledgersComplete?: (() => Promise<unknown>) | undefined;
  readonly logger: Pick<Manager['logger'], 'info' | 'warn'>;
}

export interface Metal3AdoptionResult {
  /** IPAddresses whose address was entered into the ledgers now. */
  readonly adopted: number;
  /** IPAddresses whose address already had a live entry (adopted earlier, or by another replica). */
  readonly alreadyHeld: number;
  /** IPAddresses whose address a different claim holds: reported, left to their claims' reconciles. */
  readonly conflicts: number;
}

/** Runs the adoption once per process (a `startUpStep`); a failure is forgotten, so the next caller runs it again. */
export class Metal3Adoption {
  private readonly step: () => Promise<Metal3AdoptionResult>;

  constructor(private readonly deps: Metal3AdoptionDeps) {
    this.step = startUpStep({
      after: deps.ledgersComplete,
      informers: [deps.addresses, deps.claims, deps.ledgerInformer],
      run: () => this.adopt(),
    });
  }

  /** Resolves once every Metal3 IPAddress of the scope is backed by a ledger entry. */
  adopted(): Promise<Metal3AdoptionResult> {
    return this.step();
  }

  private async adopt(): Promise<Metal3AdoptionResult> {
    let adopted = 0;
    let alreadyHeld = 0;
    let conflicts = 0;
    const holds = this.deps.addresses.store.list().map(async (ipAddress) => {
      const address = ipAddress.spec.address;
      const poolName = ipAddress.spec.pool?.name;
      const claimName = ipAddress.spec.claim?.name;
      if (!address || !poolName || !claimName) return;
      const namespace = ipAddress.metadata.namespace ?? '';
      const uid = this.claimUID(ipAddress);
      const { ledgerName, key } = ledgerSlot(address);
      const cached = this.deps.entries.get(key);
      if (cached && cached.spec.releasedAt === undefined) {
        if (cached.spec.claimRef.uid === uid) alreadyHeld += 1;
        else conflicts += 1;
        return;
      }
      const result = await this.deps.ledgers.submit(ledgerName, {
        kind: 'hold',
        reuseGracePeriodMs: 0,
        entry: metal3Entry(address, { namespace, name: poolName }, { namespace, name: claimName, uid }),
      });
      if (result.ok) {
        adopted += 1;
        assumeHold(this.deps.assumedEntries, this.deps.ledgers, ledgerName, result);
        return;
      }
      conflicts += 1;
      const by = result.holder.claimRef;
      this.deps.logger.warn(
        { ipAddress: `${namespace}/${ipAddress.metadata.name}`, address, holder: by },
        `Metal3 IPAddress not adopted: ${address} is held by ${by.kind ?? 'IPAddressClaim'} ${by.namespace}/${by.name}`,
      );
    });
    await Promise.all(holds);
    const result = { adopted, alreadyHeld, conflicts };
    this.deps.logger.info(result, 'Metal3 IPAddresses entered into the address ledgers before any allocation');
    return result;
  }

  /**
   * The uid the entry names: the IPClaim's (as its reconcile writes it), else the IPClaim owner reference's (Metal3
   * sets one), else the IPAddress's own — an IPAddress whose claim is gone still blocks its address until deleted.
   */
  private claimUID(ipAddress: StoredMetal3Address): string {
    const claimKey = claimKeyOfAddress(ipAddress);
    const claim = claimKey ? this.deps.claims.store.get(claimKey) : undefined;
    if (claim?.metadata.uid) return claim.metadata.uid;
    const owner = ipAddress.metadata.ownerReferences?.find(
      (ref) => ref.kind === 'IPClaim' && ref.name === ipAddress.spec.claim?.name,
    );
    return owner?.uid ?? ipAddress.metadata.uid ?? '';
  }
}
