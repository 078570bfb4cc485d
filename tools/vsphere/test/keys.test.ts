import { type GoToolchain, goBinaryKey } from '@tally-ipam/testenv';
import { describe, expect, it } from 'vitest';
import { capvBuild, referenceIpamBuild, vcsimBuild } from '../src/index.js';

// CI keeps ~/.cache/tally-ipam between runs: a changed key is a cold Go build there (CAPV: minutes on two cores).
// These are the keys built with the current pins and Go 1.26.8 on linux/amd64; a change to any input (a pin, a flag,
// go/go.mod or go/go.sum, the simulator's sources) fails here and is made on purpose, with the new key written below.
const GO: GoToolchain = { version: 'go1.26.8', goos: 'linux', goarch: 'amd64', gomodcache: '/not-read' };

describe('the content keys of the vSphere builds', () => {
  it('CAPV v1.15.2 keeps its key', async () => {
    expect(await goBinaryKey(capvBuild('v1.15.2'), GO)).toBe('4bdfe68a74f65aa0c8b5');
  });

  it('the simulator for CAPV v1.15.2 (govmomi v0.52.0) keeps its key', async () => {
    expect(await goBinaryKey(vcsimBuild('v1.15.2'), GO)).toBe('97ddb3a59d3f2a261604');
  });

  it("the reference provider's key is the benchmark's (apps/ipam-controller pins the same), so it is built once", async () => {
    expect(await goBinaryKey(referenceIpamBuild(), GO)).toBe('b5d2237b678a05b4c64a');
  });
});
