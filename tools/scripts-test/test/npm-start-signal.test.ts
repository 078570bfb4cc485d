// `npm start` is stopped with Ctrl-C: the terminal sends SIGINT to its whole foreground process group (npm, the shell
// npm runs the script with, our script, the controller). npm (@npmcli/run-script) forwards the signal to its child and
// exits with the child's status, unless the child was killed by a signal: then it sends that signal to itself and dies
// of it (130 in a shell). With `sh -c "node …"`, dash does not exec node, and the shell itself dies of SIGINT, so npm
// died of SIGINT even though the controller stopped cleanly with 0. `exec` makes our script npm's direct child.
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const rootManifest: { scripts?: { start?: unknown } } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const rootStart = String(rootManifest.scripts?.start);
const work = mkdtempSync(join(tmpdir(), 'tally-npm-start-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

interface NpmExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stderr: string;
}

/** Runs `npm start` in a package whose start script is `start`, in a new process group, and Ctrl-C's that group. */
async function interruptNpmStart(name: string, start: string): Promise<NpmExit> {
  const dir = join(work, name);
  cpSync(fileURLToPath(new URL('./fixtures/npm-start/', import.meta.url)), dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, private: true, scripts: { start } }));
  const npm = spawn('npm', ['start', '--silent'], { cwd: dir, detached: true, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  const exited = new Promise<NpmExit>((resolve) => {
    // 'close': also after the script and the controller, which hold npm's stderr, have exited.
    npm.once('close', (code, signal) => resolve({ code, signal, stderr }));
  });
  const lines = createInterface({ input: npm.stderr });
  lines.on('line', (line) => {
    stderr += `${line}\n`;
  });
  // Signal only once every process of the group is running and the controller has its handler.
  await new Promise<void>((resolve, reject) => {
    lines.on('line', (line) => {
      if (line.includes('controller: ready')) resolve();
    });
    void exited.then((exit) =>
      reject(new Error(`npm exited before the controller was ready: ${JSON.stringify(exit)}`)),
    );
  });
  if (npm.pid === undefined) throw new Error('npm has no pid');
  process.kill(-npm.pid, 'SIGINT');
  return exited;
}

describe('npm start stopped with Ctrl-C', () => {
  it('the root start script makes our script npm’s direct child (exec)', () => {
    expect(rootStart).toBe('exec node scripts/tally.mjs start');
  });

  it('exits 0 after the controller stops cleanly', async () => {
    const exit = await interruptNpmStart('with-exec', rootStart.replace('scripts/tally.mjs start', 'stand-in.mjs'));
    expect(exit.stderr).toContain('controller: SIGINT, stopping');
    expect(exit.stderr).not.toContain('second signal');
    expect({ code: exit.code, signal: exit.signal }).toEqual({ code: 0, signal: null });
  });

  it('without exec, npm dies of SIGINT although the controller stopped cleanly (why the script says exec)', async () => {
    const exit = await interruptNpmStart('without-exec', 'node stand-in.mjs');
    expect(exit.stderr).toContain('controller: SIGINT, stopping');
    expect({ code: exit.code, signal: exit.signal }).toEqual({ code: null, signal: 'SIGINT' });
  });
});
