/**
 * The IPAddresses this process is creating (by key) or created and its informer has not shown yet (by uid). The claim
 * reconcile that creates an IPAddress acts on the answer itself: it writes the claim's status (and is retried if that
 * fails), adopts what another writer created meanwhile or re-queues the claim. So the create event of such an
 * IPAddress need not reconcile the claim a second time (it did, for every allocation, and found nothing to do).
 *
 * This is not the read-your-own-writes overlay (`AssumedWrites.addresses`, controller-kit's `AssumedObjects`), which
 * cannot answer it: the watch event can come before the create's answer, when the overlay holds nothing yet (it holds
 * only acknowledged writes); the overlay also holds IPAddresses this process only read live, which it did not create;
 * and it drops its entry in its own `onAdd`, which runs before the controller's event filters (a controller registers
 * its handlers when it starts, after the overlay), so by the time the filter asks, the entry is gone. Answering would
 * take in-flight marks, the origin of each entry and a record of the event being delivered — three things for one
 * event filter — so it stays this small helper, with one job and one caller.
 */
export class CreatedAddresses {
  /** IPAddress key (namespace/name) → creates of it in flight. */
  private readonly inFlight = new Map<string, number>();
  private readonly uids = new Set<string>();

  /** `limit` bounds what an IPAddress whose create event never comes (deleted between two lists) can leave here. */
  constructor(private readonly limit = 10_000) {}

  /** A create of the IPAddress `key` is about to be sent. */
  creating(key: string): void {
    this.inFlight.set(key, (this.inFlight.get(key) ?? 0) + 1);
  }

  /** The create of `key` has been answered (`uid` when it created the IPAddress and its event is still to come). */
  settled(key: string, uid?: string | undefined): void {
    const left = (this.inFlight.get(key) ?? 1) - 1;
    if (left > 0) this.inFlight.set(key, left);
    else this.inFlight.delete(key);
    if (!uid) return;
    this.uids.add(uid);
    if (this.uids.size > this.limit) {
      const oldest = this.uids.values().next();
      if (!oldest.done) this.uids.delete(oldest.value);
    }
  }

  /**
   * True for the create event of an IPAddress this process created (once; the uid is forgotten) or is creating now
   * (the watch can be quicker than the answer).
   */
  take(key: string, uid: string | undefined): boolean {
    if (uid !== undefined && this.uids.delete(uid)) return true;
    return this.inFlight.has(key);
  }
}
