import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isNewer, type KubeObject } from '../src/cache/index.js';

function at(resourceVersion: string | undefined): KubeObject {
  return { metadata: { name: 'object', ...(resourceVersion === undefined ? {} : { resourceVersion }) } };
}

/** Resource versions as kube-apiserver on etcd hands them out: decimal integers, past 2^53 too. */
const integerVersion = fc.bigInt({ min: 0n, max: 2n ** 64n }).map(String);

describe('isNewer', () => {
  it('orders integer resource versions as numbers, not as text', () => {
    fc.assert(
      fc.property(integerVersion, integerVersion, (a, b) => {
        expect(isNewer(at(a), at(b))).toBe(BigInt(a) > BigInt(b));
      }),
    );
    expect(isNewer(at('10'), at('9'))).toBe(true);
  });

  it('never takes a version that is not an integer, or none, as newer or older', () => {
    const other = fc.oneof(
      fc.constant(undefined),
      fc.string().filter((text) => !/^\d+$/.test(text)),
    );
    fc.assert(
      fc.property(other, integerVersion, (odd, version) => {
        expect(isNewer(at(odd), at(version))).toBe(false);
        expect(isNewer(at(version), at(odd))).toBe(false);
      }),
    );
  });
});
