// `node scripts/tally.mjs test` in a fixture tree laid out like the repository (its own copy of scripts/, an e2e
// package with the kind lane's scripts), with `pnpm` and `docker` stubs first on PATH that log their arguments: the
// stubs answer every install, build and test stage, so only the script's own decisions are exercised. The `pnpm` stub
// also logs, per call, how many of the CPU hog's spin loops (a stress run's `node -e` children) the script has running
// beside it.
import { execFile } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const repositoryRoot = fileURLToPath(new URL('../../../', import.meta.url));
const pinnedPnpm = String(
  (
    JSON.parse(readFileSync(join(repositoryRoot, 'package.json'), 'utf8')) as { packageManager: string }
  ).packageManager.split('@')[1],
);

export interface TestJobRun {
  readonly stdout: string;
  readonly stderr: string;
  /** Each `pnpm` call's arguments. */
  readonly pnpmCalls: readonly string[];
  /** Per `pnpm` call (same order): how many `node` children the script had running at that moment. */
  readonly nodeSiblings: readonly number[];
  readonly dockerCalls: readonly string[];
}

function writeExecutable(path: string, text: string): void {
  writeFileSync(path, text);
  chmodSync(path, 0o755);
}

/**
 * Runs `node scripts/tally.mjs test ...args` in a fresh fixture tree `work/name` whose `docker info` exits
 * `dockerStatus`, with `env` on top of this process's environment.
 */
export async function runTestJob(options: {
  readonly work: string;
  readonly name: string;
  readonly dockerStatus: number;
  readonly args?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  /**
   * A `pnpm` call whose arguments contain this exits 1 after writing `report` (a vitest JSON report) to the path
   * `report.path` (relative to the tree): a stage whose tests passed and whose command still failed.
   */
  readonly failing?: { readonly call: string; readonly report: { readonly path: string; readonly json: unknown } };
  /** A `pnpm` call whose arguments contain `call` writes `json` to `path` (relative to the tree) and succeeds. */
  readonly writes?: { readonly call: string; readonly path: string; readonly json: unknown };
}): Promise<TestJobRun> {
  const tree = join(options.work, options.name);
  const bin = join(tree, 'stub-bin');
  mkdirSync(bin, { recursive: true });
  cpSync(join(repositoryRoot, 'scripts'), join(tree, 'scripts'), { recursive: true });
  writeFileSync(
    join(tree, 'package.json'),
    JSON.stringify({ name: 'fixture', private: true, packageManager: `pnpm@${pinnedPnpm}` }),
  );
  writeFileSync(join(tree, 'pnpm-workspace.yaml'), 'packages:\n  - e2e\n');
  mkdirSync(join(tree, 'e2e', 'kind'), { recursive: true });
  writeFileSync(
    join(tree, 'e2e', 'package.json'),
    JSON.stringify({
      name: '@tally-ipam/e2e',
      private: true,
      scripts: { 'prepare:kind': 'exit 0', 'test:kind': 'exit 0' },
    }),
  );
  // `prepare --capi` is a plain node command, not a pnpm one: an answering stand-in.
  mkdirSync(join(tree, 'packages', 'testenv', 'dist'), { recursive: true });
  writeFileSync(join(tree, 'packages', 'testenv', 'dist', 'cli.js'), '');
  const pnpmLog = join(tree, 'pnpm.log');
  const dockerLog = join(tree, 'docker.log');
  let failing = '';
  if (options.failing) {
    const reportSource = join(tree, 'failing-report.json');
    writeFileSync(reportSource, JSON.stringify(options.failing.report.json));
    const target = join(tree, options.failing.report.path);
    failing = `case "$*" in *'${options.failing.call}'*) cp '${reportSource}' '${target}'; exit 1;; esac\n`;
  }
  if (options.writes) {
    const source = join(tree, 'written.json');
    writeFileSync(source, JSON.stringify(options.writes.json));
    const target = join(tree, options.writes.path);
    failing += `case "$*" in *'${options.writes.call}'*) cp '${source}' '${target}';; esac\n`;
  }
  // One line per call, count and arguments together: calls run at once, and two appends each could interleave.
  writeExecutable(
    join(bin, 'pnpm'),
    `#!/bin/sh\n` +
      // The hog's spin loops by their command line (`node -e …`), live ones only. Not every child called node: one the
      // script is starting beside this call is its fork until it execs (named node, with the script's own command
      // line), and one that has exited may not be reaped yet (a zombie, state Z); on a busy machine both happen.
      `n=$(ps -o stat=,args= --ppid "$PPID" | grep -v '^Z' | grep -c 'node -e ')\n` +
      `printf '%s\\t%s\\n' "$n" "$*" >> '${pnpmLog}'\n` +
      failing +
      `[ "$1" = --version ] && echo '${pinnedPnpm}'\nexit 0\n`,
  );
  writeExecutable(join(bin, 'docker'), `#!/bin/sh\necho "$*" >> '${dockerLog}'\nexit ${options.dockerStatus}\n`);
  const { stdout, stderr } = await run(
    process.execPath,
    [join(tree, 'scripts', 'tally.mjs'), 'test', ...(options.args ?? [])],
    {
      cwd: tree,
      env: { ...process.env, TALLY_TEST_STRESS: '', ...options.env, PATH: `${bin}:${process.env.PATH ?? ''}` },
    },
  ).catch((error: { stdout?: string; stderr?: string; code?: number }) => {
    // A non-zero exit is the summary's business (a lane that ran here wrote no report); the output is what is tested.
    if (error.stdout === undefined) throw error;
    return { stdout: error.stdout, stderr: error.stderr ?? '' };
  });
  const lines = (path: string): string[] =>
    existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(Boolean) : [];
  const calls = lines(pnpmLog).map((line) => {
    const tab = line.indexOf('\t');
    return { siblings: Number(line.slice(0, tab)), args: line.slice(tab + 1) };
  });
  return {
    stdout,
    stderr,
    pnpmCalls: calls.map((call) => call.args),
    nodeSiblings: calls.map((call) => call.siblings),
    dockerCalls: lines(dockerLog),
  };
}
