import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const APP_DIR = fileURLToPath(new URL('..', import.meta.url));
const BUNDLE_SCRIPT = fileURLToPath(new URL('../../../tools/ship/image/bundle.sh', import.meta.url));

/** The production image holds one esbuild bundle of dist/main.js (tools/ship/image/bundle.sh); this is that bundle. */
describe('the production bundle (what the image runs)', () => {
  const work = mkdtempSync(join(tmpdir(), 'tally-ipam-bundle-'));
  const bundle = join(work, 'main.mjs');
  let text = '';

  beforeAll(() => {
    execFileSync('bash', [BUNDLE_SCRIPT, APP_DIR, bundle], { stdio: ['ignore', 'inherit', 'inherit'] });
    text = readFileSync(bundle, 'utf8');
  });

  afterAll(() => {
    rmSync(work, { recursive: true, force: true });
  });

  it('carries no test harness: neither testenv (its field manager, its control plane) nor the demo certificate code', () => {
    expect(text.length).toBeGreaterThan(1_000_000);
    expect(text).toContain('ipaddressclaims'); // the controller is there
    expect(text).not.toContain("'tally-testenv'");
    expect(text).not.toContain('"tally-testenv"');
    expect(text).not.toContain('startControlPlane');
    // @peculiar/x509 itself ships: the kit's diagnostics server makes its self-signed certificate with it. The demo's
    // throwaway webhook CA must not.
    expect(text).not.toContain('tally-ipam-local-webhook-ca');
    expect(text).not.toContain('Tally is allocating');
  });

  it('without a cluster, exits 1 saying the build has no demo instead of starting one', () => {
    const env: NodeJS.ProcessEnv = { ...process.env, HOME: work };
    delete env.KUBECONFIG;
    delete env.KUBERNETES_SERVICE_HOST;
    // The timeout only guards against a hang (the start took 9.8 s at load 20, and 60 s was a bound a loaded machine can
    // pass): killed, the child's status is null and the test fails with what it had printed.
    const result = spawnSync(process.execPath, [bundle], { cwd: work, env, encoding: 'utf8', timeout: 300_000 });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('this build has no embedded demo');
    expect(result.stdout).not.toContain('starting an embedded local control plane');
  });
});
