import type { HeldAddress } from '../allocate.js';

/**
 * The holds this process won and its ledger entry view may not show yet (the view follows the ledger informer, which
 * trails the write). Without them, claims of one pool reconciled in parallel would all choose the same lowest free
 * address and all but one would be refused by the ledger, one after the other. They are a hint that saves a refused
 * write, never the guarantee: the ledger write decides. An entry is dropped when released, or after `ttlMs` — by then
 * the view shows the entry, or it is gone.
 */
export class RecentHolds {
  private readonly byAddress = new Map<string, { readonly uid: string; readonly until: number }>();

  constructor(
    private readonly now: () => number,
    private readonly ttlMs = 120_000,
  ) {}

  add(address: string, uid: string): void {
    this.byAddress.set(address, { uid, until: this.now() + this.ttlMs });
  }

  isHeldBy(address: string, uid: string): boolean {
    const hold = this.live(address);
    return hold !== undefined && hold.uid === uid;
  }

  /** Addresses held for other claims, as held addresses without a claim name (they block, never match). */
  heldByOthers(uid: string): HeldAddress[] {
    const held: HeldAddress[] = [];
    for (const address of [...this.byAddress.keys()]) {
      const hold = this.live(address);
      if (hold && hold.uid !== uid) held.push({ address });
    }
    return held;
  }

  addressesOf(uid: string): string[] {
    return [...this.byAddress.keys()].filter((address) => this.live(address)?.uid === uid);
  }

  forget(address: string, uid: string): void {
    if (this.byAddress.get(address)?.uid === uid) this.byAddress.delete(address);
  }

  forgetClaim(uid: string): void {
    for (const address of this.addressesOf(uid)) this.byAddress.delete(address);
  }

  private live(address: string): { readonly uid: string; readonly until: number } | undefined {
    const hold = this.byAddress.get(address);
    if (hold === undefined) return undefined;
    if (hold.until > this.now()) return hold;
    this.byAddress.delete(address);
    return undefined;
  }
}
