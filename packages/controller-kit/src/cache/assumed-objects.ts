import type { SharedInformer } from './informer.js';
import { isNewer, type KubeObject, keyOf } from './object.js';

/**
 * The objects this process just wrote, as the API server returned them, kept until the informer shows the same or a
 * newer version (kube-scheduler's assume cache). A reconcile that runs again right after its own writes (any event
 * of the claim, its pool or its holdings can queue it then) sees its own finalizer, status, IPAddress and holding instead
 * of the informer's older copy: no live read to find what it just created, no write with a stale resourceVersion that
 * can only end in a 409 Conflict.
 *
 * Only what the API server acknowledged is assumed, so this is never ahead of the truth; it can only be behind it in
 * the ways the informer itself is (another writer changed the object since), which every write already guards with a
 * resourceVersion precondition or a create that fails on conflict.
 */
export class AssumedObjects<T extends KubeObject> {
  private readonly written = new Map<string, T>();

  constructor(private readonly informer: Pick<SharedInformer<T>, 'store' | 'addEventHandler'>) {
    informer.addEventHandler({
      onAdd: (object) => this.informerCaughtUp(object),
      onUpdate: (_old, object) => this.informerCaughtUp(object),
      onDelete: (object) => {
        const key = keyOf(object);
        const assumed = this.written.get(key);
        // A delete of an older incarnation (same name, another uid, lower version) says nothing about ours.
        if (assumed && (assumed.metadata.uid === object.metadata.uid || !isNewer(assumed, object))) {
          this.written.delete(key);
        }
      },
    });
  }

  /** Records an object a write of this process returned; returns it for chaining. */
  assume(object: T): T {
    const key = keyOf(object);
    const current = this.get(key);
    if (current === undefined || isNewer(object, current)) this.written.set(key, object);
    return object;
  }

  /** The newer of the informer's object and this process's last write of it; undefined when neither has it. */
  get(key: string): T | undefined {
    const cached = this.informer.store.get(key);
    const assumed = this.written.get(key);
    if (assumed === undefined) return cached;
    if (cached !== undefined && !isNewer(assumed, cached)) {
      this.written.delete(key);
      return cached;
    }
    return assumed;
  }

  /** Forgets a write (the object was deleted by this process, or the write turned out not to count). */
  forget(key: string): void {
    this.written.delete(key);
  }

  /** Objects written by this process that the informer does not show yet (or shows in an older version). */
  pending(): T[] {
    return [...this.written.values()];
  }

  private informerCaughtUp(object: T): void {
    const key = keyOf(object);
    const assumed = this.written.get(key);
    if (assumed !== undefined && !isNewer(assumed, object)) this.written.delete(key);
  }
}
