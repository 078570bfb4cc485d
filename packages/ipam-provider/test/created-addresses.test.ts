import { describe, expect, it } from 'vitest';
import { CreatedAddresses } from '../src/claim/created-addresses.js';

describe('CreatedAddresses', () => {
  it('answers true once per created uid, and for any key while its create is in flight', () => {
    const created = new CreatedAddresses();
    expect(created.take('ns/a', 'uid-1')).toBe(false);
    created.creating('ns/a');
    // The watch was quicker than the answer: the event carries a uid not known yet.
    expect(created.take('ns/a', 'uid-1')).toBe(true);
    created.settled('ns/a', 'uid-1');
    expect(created.take('ns/a', 'uid-1')).toBe(true);
    expect(created.take('ns/a', 'uid-1')).toBe(false);
    created.creating('ns/b');
    created.settled('ns/b');
    expect(created.take('ns/b', 'uid-2')).toBe(false);
  });

  it('counts overlapping creates of one key', () => {
    const created = new CreatedAddresses();
    created.creating('ns/a');
    created.creating('ns/a');
    created.settled('ns/a');
    expect(created.take('ns/a', undefined)).toBe(true);
    created.settled('ns/a');
    expect(created.take('ns/a', undefined)).toBe(false);
  });

  it('keeps at most its limit of uids, forgetting the oldest first', () => {
    const created = new CreatedAddresses(3);
    for (const uid of ['a', 'b', 'c', 'd']) {
      created.creating(`ns/${uid}`);
      created.settled(`ns/${uid}`, uid);
    }
    expect(['a', 'b', 'c', 'd'].map((uid) => created.take(`ns/${uid}`, uid))).toEqual([false, true, true, true]);
  });
});
