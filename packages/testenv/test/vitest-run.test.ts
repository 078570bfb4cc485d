import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { eventually, processesMentioning } from './helpers.js';

const fixtureDir = fileURLToPath(new URL('./fixtures/vitest-run', import.meta.url));
const vitestCli = join(dirname(createRequire(import.meta.url).resolve('vitest/package.json')), 'vitest.mjs');

/** The environment of a nested vitest run: ours minus the variables that would make it think it is a worker. */
function nestedEnv(mode: 'fail' | 'hang', out: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.startsWith('VITEST') && name !== 'TEST' && name !== 'NODE_ENV') env[name] = value;
  }
  return { ...env, TALLY_FIXTURE_MODE: mode, TALLY_FIXTURE_OUT: out };
}

function runNestedVitest(mode: 'fail' | 'hang', out: string) {
  const child = spawn(process.execPath, [vitestCli, 'run', '--config', join(fixtureDir, 'vitest.config.ts')], {
    cwd: fixtureDir,
    env: nestedEnv(mode, out),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });
  return { child, exited, output: () => output };
}

/** Bounded only by eventually's default (90 s): a loaded machine delays the deaths of SIGKILLed processes. */
async function expectNothingLeft(stateDir: string): Promise<void> {
  await eventually(`the processes of ${stateDir} to be gone`, () => processesMentioning(stateDir).length === 0);
  await eventually(`${stateDir} to be removed`, () => !existsSync(stateDir));
  await eventually('the nested vitest processes to be gone', () => processesMentioning(fixtureDir).length === 0);
}

/** A nested vitest that starts a whole control plane: minutes on a loaded 2-core machine. A bound for hangs only. */
const NESTED_RUN_TIMEOUT_MS = 600_000;

describe('a vitest run using createGlobalSetup', () => {
  it(
    'stops the control plane after a failing test',
    async () => {
      const workDir = mkdtempSync(join(tmpdir(), 'tally-testenv-fixture-'));
      try {
        const out = join(workDir, 'state-dir');
        const run = runNestedVitest('fail', out);
        const exit = await run.exited;
        expect(exit.code, run.output()).toBe(1);
        expect(run.output()).toContain('1 failed');
        const stateDir = readFileSync(out, 'utf8');
        expect(stateDir).toMatch(/tally-testenv-/);
        await expectNothingLeft(stateDir);
      } finally {
        rmSync(workDir, { recursive: true, force: true });
      }
    },
    NESTED_RUN_TIMEOUT_MS,
  );

  it(
    'leaves nothing behind when vitest itself is SIGKILLed mid-test',
    async () => {
      const workDir = mkdtempSync(join(tmpdir(), 'tally-testenv-fixture-'));
      try {
        const out = join(workDir, 'state-dir');
        const run = runNestedVitest('hang', out);
        await eventually(
          'the nested test to report its control plane',
          () => existsSync(out),
          NESTED_RUN_TIMEOUT_MS / 2,
        );
        const stateDir = readFileSync(out, 'utf8');
        expect(processesMentioning(stateDir).length).toBeGreaterThanOrEqual(3);
        run.child.kill('SIGKILL');
        expect((await run.exited).signal).toBe('SIGKILL');
        await expectNothingLeft(stateDir);
      } finally {
        rmSync(workDir, { recursive: true, force: true });
      }
    },
    NESTED_RUN_TIMEOUT_MS,
  );
});
