import { spawn } from 'node:child_process';
import { GO_ENV } from '@tally-ipam/testenv';
import { describe, expect, it } from 'vitest';
import { goFlagsFor } from '../src/capv-binary.js';
import { goModuleDir } from '../src/paths.js';
import { capvRelease, capvVersionFor } from '../src/versions.js';

/** The run's CAPV release (the one paired with its Cluster API release): its module file, so its govmomi. */
const release = capvRelease(capvVersionFor());

/** `go test ./vcsim` in the simulator's module, with testenv's Go environment (the build cache is shared). */
function goTest(): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('go', ['test', '-trimpath', '-count=1', '-v', './vcsim'], {
      cwd: goModuleDir(),
      env: { ...process.env, ...GO_ENV, GOFLAGS: goFlagsFor(release) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
}

describe(`the simulator's guest reporter (go test ./vcsim, govmomi ${release.govmomi})`, () => {
  it('reports the addresses of the metadata CAPV writes once a VM runs, and none once it stops', async () => {
    const { code, output } = await goTest();
    expect(code, output).toBe(0);
    expect(output).toContain('--- PASS: TestGuestReporterReportsTheConfiguredAddresses');
    expect(output).toContain('--- PASS: TestGuestReporterClearsAddressesOfAPoweredOffVM');
  });
});
