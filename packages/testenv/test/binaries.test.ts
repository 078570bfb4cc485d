import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensureBinaries } from '../src/binaries.js';
import { ETCD_VERSION, KUBERNETES_VERSION } from '../src/versions.js';
import { runFixture } from './child-process.js';

interface EnsureOutput {
  dir: string;
  builtNow: boolean;
  progress: string[];
}

describe('ensureBinaries', () => {
  it('returns cached binaries that report the pinned versions', async () => {
    const first = await ensureBinaries();
    const second = await ensureBinaries();
    expect(second.dir).toBe(first.dir);
    expect(second.builtNow).toBe(false);
    expect(execFileSync(second.kubeAPIServer, ['--version'], { encoding: 'utf8' })).toContain(KUBERNETES_VERSION);
    expect(execFileSync(second.kubeControllerManager, ['--version'], { encoding: 'utf8' })).toContain(
      KUBERNETES_VERSION,
    );
    expect(execFileSync(second.etcd, ['--version'], { encoding: 'utf8' })).toContain(ETCD_VERSION.slice(1));
    for (const [name, size] of Object.entries(second.sizes)) {
      expect(statSync(join(second.dir, name)).size).toBe(size);
    }
  });

  it('builds once when several processes ask for an empty cache at the same time', async () => {
    const cacheDir = mkdtempSync(join(tmpdir(), 'tally-testenv-cache-'));
    try {
      const env = { ...process.env, TALLY_CACHE_DIR: cacheDir };
      const results = await Promise.all([
        runFixture<EnsureOutput>('ensure-binaries.ts', [], env),
        runFixture<EnsureOutput>('ensure-binaries.ts', [], env),
      ]);
      const outputs = results.map((r) => r.output);
      expect(outputs.filter((o) => o.builtNow)).toHaveLength(1);
      expect(outputs[0]?.dir).toBe(outputs[1]?.dir);
      expect(outputs[0]?.dir.startsWith(join(cacheDir, 'control-plane'))).toBe(true);
      const builder = outputs.find((o) => o.builtNow);
      expect(builder?.progress.some((line) => line.startsWith('building kube-apiserver'))).toBe(true);
      expect(builder?.progress.some((line) => /^built in /.test(line))).toBe(true);
      await Promise.all(results.map((r) => r.exited));
    } finally {
      rmSync(cacheDir, { recursive: true, force: true });
    }
    // A real build into an empty cache: with a warm Go build cache it links three large binaries (about 50 s on an
    // idle 2-core machine, several times that under load); without one, a cold build. A bound for hangs only.
  }, 1_800_000);
});

describe('ensureBinaries without Go', () => {
  it('says that Go is missing and what to do', async () => {
    // Only node's own directory on PATH: no `go`.
    const env = { ...process.env, PATH: dirname(process.execPath) };
    await expect(runFixture<EnsureOutput>('ensure-binaries.ts', [], env)).rejects.toThrow(
      /Go is not installed \(no "go" on PATH\).*Go >= 1\.24.*TALLY_TEST_KUBECONFIG/s,
    );
  });
});
