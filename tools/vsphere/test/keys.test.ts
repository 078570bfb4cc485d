import { type GoToolchain, goBinaryKey } from '@tally-ipam/testenv';
import { describe, expect, it } from 'vitest';
import { CAPV_RELEASES, capvBuild, referenceIpamBuild, vcsimBuild } from '../src/index.js';

// CI keeps ~/.cache/tally-ipam between runs: a changed key is a cold Go build there (CAPV: minutes on two cores).
// These are the keys built with the current pins and Go 1.26.8 on linux/amd64; a change to any input (a pin, a flag,
// a module file under go/ and its go.sum, the simulator's sources) fails here and is made on purpose, with the new
// key written below.
const GO: GoToolchain = { version: 'go1.26.8', goos: 'linux', goarch: 'amd64', gomodcache: '/not-read' };

describe('the content keys of the vSphere builds', () => {
  it.each([
    ['v1.15.2', '4bdfe68a74f65aa0c8b5', '97ddb3a59d3f2a261604'],
    ['v1.16.1', 'fa582c3fa2fbffa29b2e', '2f701bc0e41b494be60f'],
  ])('CAPV %s and its simulator keep their keys', async (version, capv, vcsim) => {
    expect(await goBinaryKey(capvBuild(version), GO)).toBe(capv);
    expect(await goBinaryKey(vcsimBuild(version), GO)).toBe(vcsim);
  });

  it('every CAPV release is pinned above', () => {
    expect(Object.keys(CAPV_RELEASES).sort()).toEqual(['v1.15.2', 'v1.16.1']);
  });

  it("the reference provider's key is the benchmark's (apps/ipam-controller pins the same), so it is built once", async () => {
    expect(await goBinaryKey(referenceIpamBuild(), GO)).toBe('b5d2237b678a05b4c64a');
  });
});
