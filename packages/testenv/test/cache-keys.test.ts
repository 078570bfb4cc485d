import { describe, expect, it } from 'vitest';
import { capiManagerBuild, clusterctlBuild, controlPlaneBuild, type GoToolchain, goBinaryKey } from '../src/index.js';

// CI keeps ~/.cache/tally-ipam between runs; a changed key means a cold Go build of up to 30 minutes there. These are
// the keys of the entries built with the current pins (and Go 1.26.8 on linux/amd64), so a change of any input to a
// key (a pin, a build flag, the key material's shape, the wrapper modules' go.mod/go.sum) fails here and has to be
// made on purpose, with the new key written below.
const GO: GoToolchain = { version: 'go1.26.8', goos: 'linux', goarch: 'amd64', gomodcache: '/not-read' };

describe('the content keys of the Go binary cache', () => {
  it.each([
    ['control-plane', controlPlaneBuild, 'b3d299afd8c784c3859f'],
    ['cluster-api', capiManagerBuild, '81f232d6324c67d5ec0c'],
    ['clusterctl', clusterctlBuild, 'd84c433dc83472bbc58c'],
  ])('%s keeps its key', async (_entry, request, key) => {
    expect(await goBinaryKey(request(), GO)).toBe(key);
  });

  it('each entry lives in its own cache directory', () => {
    const dirs = [controlPlaneBuild, capiManagerBuild, clusterctlBuild].map((request) => request().cacheDir);
    expect(new Set(dirs).size).toBe(dirs.length);
  });
});
