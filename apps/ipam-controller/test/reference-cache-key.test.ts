import { type GoToolchain, goBinaryKey } from '@tally-ipam/testenv';
import { describe, expect, it } from 'vitest';
import { referenceProviderBuild } from '../bench/reference-provider.js';

// CI keeps ~/.cache/tally-ipam between runs; a changed key means a cold Go build of up to 30 minutes there. These are
// the keys of the entries built with the current pins (and Go 1.26.8 on linux/amd64), so a change of any input to a
// key (a pin, a build flag, the key material's shape, the wrapper modules' go.mod/go.sum) fails here and has to be
// made on purpose, with the new key written below.
const GO: GoToolchain = { version: 'go1.26.8', goos: 'linux', goarch: 'amd64', gomodcache: '/not-read' };

describe('the content key of the reference provider build', () => {
  it('reference-ipam keeps its key', async () => {
    expect(await goBinaryKey(referenceProviderBuild(), GO)).toBe('b5d2237b678a05b4c64a');
  });
});
