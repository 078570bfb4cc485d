import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { detectGo } from '../src/go.js';
import { ensureGoBinary, goBinaryCacheKey, goBinaryKey } from '../src/go-binary.js';
import { runFixture } from './child-process.js';
import { HELLO_VERSION, helloBuild } from './fixtures/hello-build.js';

interface EnsureOutput {
  dir: string;
  builtNow: boolean;
  progress: string[];
}

let cacheDir: string;
beforeEach(() => {
  cacheDir = mkdtempSync(join(tmpdir(), 'tally-go-binary-'));
});
afterEach(() => {
  rmSync(cacheDir, { recursive: true, force: true });
});

describe('goBinaryCacheKey', () => {
  it('hashes the format first and then the material in its own member order', () => {
    const key = goBinaryCacheKey(1, { module: 'm', version: 'v1' });
    expect(key).toMatch(/^[0-9a-f]{20}$/);
    expect(goBinaryCacheKey(1, { module: 'm', version: 'v1' })).toBe(key);
    expect(goBinaryCacheKey(2, { module: 'm', version: 'v1' })).not.toBe(key);
    expect(goBinaryCacheKey(1, { version: 'v1', module: 'm' })).not.toBe(key);
  });
});

describe('ensureGoBinary', () => {
  it('builds once when several processes ask for an empty cache at the same time', async () => {
    const results = await Promise.all([1, 2, 3].map(() => runFixture<EnsureOutput>('ensure-go-binary.ts', [cacheDir])));
    const outputs = results.map((r) => r.output);
    expect(outputs.filter((o) => o.builtNow)).toHaveLength(1);
    expect(new Set(outputs.map((o) => o.dir))).toEqual(new Set([outputs[0]?.dir]));
    const builder = outputs.find((o) => o.builtNow);
    expect(builder?.progress.some((line) => line.startsWith(`building hello ${HELLO_VERSION}`))).toBe(true);
    expect(builder?.progress.some((line) => /^built in .*greeter/.test(line))).toBe(true);
    await Promise.all(results.map((r) => r.exited));

    const again = await ensureGoBinary(helloBuild(cacheDir));
    expect(again.builtNow).toBe(false);
    expect(again.dir).toBe(outputs[0]?.dir);
    expect(execFileSync(again.paths.greeter ?? '', [], { encoding: 'utf8' })).toBe('hello\n');
    const stamp = JSON.parse(readFileSync(join(again.dir, 'stamp.json'), 'utf8'));
    expect(stamp).toMatchObject({ format: 1, key: again.key, version: HELLO_VERSION, sizeBytes: again.sizes.greeter });
    // Only the entry, its lock's absence and the build log remain: no temporary directory.
    expect(readdirSync(cacheDir).sort()).toEqual([again.key, `${again.key}.build.log`]);
  });

  it('publishes nothing when the fresh binary fails its verification', async () => {
    const request = {
      ...helloBuild(cacheDir),
      verify: async (): Promise<void> => {
        throw new Error('greeter -version printed "unset", expected v0');
      },
    };
    await expect(ensureGoBinary(request)).rejects.toThrow(/printed "unset"/);
    const key = await goBinaryKey(request, await detectGo());
    expect(readdirSync(cacheDir).filter((name) => name.startsWith(key) && !name.endsWith('.build.log'))).toEqual([]);
    expect((await ensureGoBinary(helloBuild(cacheDir))).builtNow).toBe(true);
  });

  it('takes an entry whose stamp has the layout written before this helper, without building', async () => {
    const request = helloBuild(cacheDir);
    const key = await goBinaryKey(request, await detectGo());
    const dir = join(cacheDir, key);
    mkdirSync(dir);
    writeFileSync(join(dir, 'greeter'), 'not a real binary: a rebuild would replace it', { mode: 0o755 });
    // clusterctl's stamps had no builtAt; the others had it. Both carried sizeBytes instead of sizes.
    const stamp = { format: 1, key, version: HELLO_VERSION, goVersion: 'go1.26.8', buildDurationMs: 5, sizeBytes: 46 };
    writeFileSync(join(dir, 'stamp.json'), JSON.stringify(stamp));
    const entry = await ensureGoBinary(request);
    expect(entry.builtNow).toBe(false);
    expect(entry.buildDurationMs).toBe(5);
    expect(readFileSync(join(dir, 'greeter'), 'utf8')).toContain('not a real binary');
  });
});
