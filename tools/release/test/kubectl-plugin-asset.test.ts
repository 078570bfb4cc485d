import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { KUBECTL_PLUGIN_TARBALL, writeKubectlPluginTarball } from '../src/artifacts.js';
import { REPOSITORY_ROOT } from '../src/workspace.js';

const work = mkdtempSync(join(tmpdir(), 'tally-kubectl-plugin-asset-'));

afterAll(() => {
  rmSync(work, { recursive: true, force: true });
});

const Manifest = z.looseObject({
  name: z.string(),
  version: z.string(),
  bin: z.record(z.string(), z.string()),
  dependencies: z.record(z.string(), z.string()),
});

function tar(args: readonly string[]): string {
  return execFileSync('tar', [...args], { encoding: 'utf8' });
}

describe('release asset kubectl-tally.tgz', () => {
  it("is the plugin's npm package under a fixed name: its version, its bin, its build, no workspace ranges", () => {
    const out = join(work, 'release');
    const path = writeKubectlPluginTarball(out);
    expect(basename(path)).toBe(KUBECTL_PLUGIN_TARBALL);
    // Only the tarball is left: pnpm's scratch directory is gone.
    expect(readdirSync(out)).toEqual([KUBECTL_PLUGIN_TARBALL]);
    const files = tar(['-tzf', path]).split('\n').filter(Boolean);
    expect(files).toContain('package/dist/cli.js');
    expect(files).toContain('package/README.md');
    expect(files.filter((file) => file.includes('/test/'))).toEqual([]);
    const packed = Manifest.parse(JSON.parse(tar(['-xzOf', path, 'package/package.json'])));
    const workspace = Manifest.parse(
      JSON.parse(readFileSync(join(REPOSITORY_ROOT, 'packages/kubectl-tally/package.json'), 'utf8')),
    );
    expect(packed.name).toBe('@tally-ipam/kubectl-tally');
    expect(packed.version).toBe(workspace.version);
    expect(packed.bin).toEqual({ 'kubectl-tally': './dist/cli.js' });
    expect(Object.entries(packed.dependencies).filter(([, range]) => range.startsWith('workspace:'))).toEqual([]);
    expect(tar(['-xzOf', path, 'package/dist/cli.js']).startsWith('#!/usr/bin/env node\n')).toBe(true);
  });
});
