import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { downloadGoModule } from '@tally-ipam/testenv';
import { describe, expect, it } from 'vitest';
import { goModuleDir } from '../src/paths.js';
import { CAPV_MODULE, CAPV_RELEASES, type CapvRelease } from '../src/versions.js';

/** `require` and `replace` lines of a go.mod, as `module → version` (and `module → target version`). */
function parseGoMod(text: string): { requires: Map<string, string>; replaces: Map<string, string> } {
  const requires = new Map<string, string>();
  const replaces = new Map<string, string>();
  let block: 'require' | 'replace' | undefined;
  for (const raw of text.split('\n')) {
    const line = raw.replace(/\/\/.*$/, '').trim();
    if (line === ')') {
      block = undefined;
      continue;
    }
    const opened = /^(require|replace)\s*\($/.exec(line);
    if (opened) {
      block = opened[1] as 'require' | 'replace';
      continue;
    }
    const single = /^(require|replace)\s+(.*)$/.exec(line);
    const kind = single ? (single[1] as 'require' | 'replace') : block;
    const body = single ? (single[2] ?? '') : line;
    if (kind === 'require') {
      const [module, version] = body.split(/\s+/);
      if (module && version) requires.set(module, version);
    } else if (kind === 'replace') {
      const match = /^(\S+)(?:\s+\S+)?\s+=>\s+(\S+)\s+(\S+)$/.exec(body);
      if (match?.[1] && match[3]) replaces.set(match[1], `${match[2]} ${match[3]}`);
    }
  }
  return { requires, replaces };
}

const released = (Object.values(CAPV_RELEASES) as CapvRelease[]).filter((release) => release.graph === 'released');

describe.each(released.map((release) => [release.version, release] as const))(
  "CAPV %s is built with its release's own module graph",
  (version, release) => {
    it(`go/${release.modfile} requires every module at the version CAPV's go.mod names, with its replaces`, async () => {
      const [ours, theirs] = await Promise.all([
        readFile(join(goModuleDir(), release.modfile), 'utf8').then(parseGoMod),
        readFile(join(await downloadGoModule(CAPV_MODULE, version), 'go.mod'), 'utf8').then(parseGoMod),
      ]);
      expect(ours.requires.get(CAPV_MODULE)).toBe(version);
      expect(ours.replaces).toEqual(theirs.replaces);
      const differing = [...ours.requires]
        .filter(([module]) => module !== CAPV_MODULE)
        .filter(([module, v]) => theirs.requires.get(module) !== v)
        .map(([module, v]) => `${module} ${v} (CAPV: ${theirs.requires.get(module) ?? 'not required'})`);
      expect(differing).toEqual([]);
      // What CAPV's manager links is in the graph: the few modules tidy left out are its tests' and tools'.
      expect(ours.requires.get('github.com/vmware/govmomi')).toBe(release.govmomi);
      expect(ours.replaces.get('sigs.k8s.io/cluster-api')).toBe(`sigs.k8s.io/cluster-api ${release.capiBuiltWith}`);
    });
  },
);
