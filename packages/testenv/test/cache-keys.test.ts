import { describe, expect, it } from 'vitest';
import {
  CLUSTER_API_RELEASES,
  capiManagerBuild,
  clusterctlBuild,
  controlPlaneBuild,
  type GoToolchain,
  goBinaryKey,
} from '../src/index.js';

// CI keeps ~/.cache/tally-ipam between runs; a changed key means a cold Go build of up to 30 minutes there. These are
// the keys of the entries built with the current pins (and Go 1.26.8 on linux/amd64), so a change of any input to a
// key (a pin, a build flag, the key material's shape, the wrapper modules' go.mod/go.sum) fails here and has to be
// made on purpose, with the new key written below. Each Cluster API release has its own keys; v1.12.10's are the
// ones its entries had when it was the only release, so those builds stay valid.
const GO: GoToolchain = { version: 'go1.26.8', goos: 'linux', goarch: 'amd64', gomodcache: '/not-read' };

describe('the content keys of the Go binary cache', () => {
  it('control-plane keeps its key', async () => {
    expect(await goBinaryKey(controlPlaneBuild(), GO)).toBe('b3d299afd8c784c3859f');
  });

  it.each([
    ['cluster-api', 'v1.12.10', '81f232d6324c67d5ec0c'],
    ['clusterctl', 'v1.12.10', 'd84c433dc83472bbc58c'],
    ['cluster-api', 'v1.14.2', '5cd3f0a1c5e34ed681e3'],
    ['clusterctl', 'v1.14.2', '6b51933a5bb4cf16a8d7'],
  ])('%s %s keeps its key', async (entry, version, key) => {
    const request = entry === 'cluster-api' ? capiManagerBuild({ version }) : clusterctlBuild({ version });
    expect(await goBinaryKey(request, GO)).toBe(key);
  });

  it('every supported release is pinned above', () => {
    expect(Object.keys(CLUSTER_API_RELEASES).sort()).toEqual(['v1.12.10', 'v1.14.2']);
  });

  it('each entry lives in its own cache directory', () => {
    const dirs = [controlPlaneBuild(), capiManagerBuild(), clusterctlBuild()].map((request) => request.cacheDir);
    expect(new Set(dirs).size).toBe(dirs.length);
  });
});
