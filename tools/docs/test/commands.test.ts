import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureKindBinaries } from '@tally-ipam/kind';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { helpFlags } from './support/clusterctl.js';
import { type CommandLine, commandLines, flagName } from './support/commands.js';
import { at, guidePages, REPOSITORY_ROOT } from './support/guide.js';
import type { Page } from './support/markdown.js';

/**
 * The guide's command lines besides clusterctl's (clusterctl.test.ts checks those), each against the real `--help`
 * of what it runs: `tally-kind` (`node tools/kind/dist/cli.js …`) its command and flags; `pnpm --filter <package>
 * <script> …` a script the package has, pnpm's own flags, and the script's flags against the script's `--help`;
 * `pnpm <command> --flag` pnpm's flags for that command; `kubectl …` its subcommand's flags and the global ones
 * (the kubectl tools/kind builds for the kind lane, at the Kubernetes release of testenv's control plane); `kubectl
 * tally …` its command and flags against the plugin's own `--help` (kubectl passes the words after `tally` to it).
 */

const TALLY_KIND = 'tools/kind/dist/cli.js';
/** The kubectl plugin's bin: a `kubectl tally …` line is the plugin's, checked against its own --help. */
const KUBECTL_TALLY = 'packages/kubectl-tally/dist/cli.js';

interface Run {
  readonly status: number;
  readonly output: string;
}

function run(command: string, args: readonly string[]): Run {
  const result = spawnSync(command, [...args], { cwd: REPOSITORY_ROOT, encoding: 'utf8', timeout: 120_000 });
  if (result.error) throw result.error;
  return { status: result.status ?? -1, output: `${result.stdout}${result.stderr}` };
}

/** The help text of a command that must answer `--help` with exit 0. */
function helpOf(command: string, args: readonly string[]): string {
  const help = run(command, args);
  if (help.status !== 0) throw new Error(`${command} ${args.join(' ')} exited ${help.status}: ${help.output}`);
  // pnpm writes a boolean flag as `--[no-]name`: both spellings are flags.
  return help.output.replace(/--\[no-\]([a-z0-9-]+)/g, '--$1, --no-$1');
}

function flagsOf(words: readonly string[]): string[] {
  return words.flatMap((word) => {
    const flag = flagName(word);
    return flag === undefined ? [] : [flag];
  });
}

function linesOf(program: string): { page: Page; line: CommandLine }[] {
  return guidePages().flatMap((page) => commandLines(page, program).map((line) => ({ page, line })));
}

const PackageJson = z.object({ name: z.string(), scripts: z.record(z.string(), z.string()).optional() });

/** Every workspace package's name and scripts (packages/, apps/, tools/, e2e). */
function workspaceScripts(): Map<string, readonly string[]> {
  const dirs = ['packages', 'apps', 'tools'].flatMap((parent) =>
    readdirSync(join(REPOSITORY_ROOT, parent)).map((name) => join(parent, name)),
  );
  const scripts = new Map<string, readonly string[]>();
  for (const dir of [...dirs, 'e2e']) {
    let text: string;
    try {
      text = readFileSync(join(REPOSITORY_ROOT, dir, 'package.json'), 'utf8');
    } catch {
      continue;
    }
    const parsed = PackageJson.parse(JSON.parse(text));
    scripts.set(parsed.name, Object.keys(parsed.scripts ?? {}));
  }
  return scripts;
}

/** pnpm's flags that take a value (the next word is not a command). */
const PNPM_VALUE_FLAGS = new Set(['--filter', '-F', '--dir', '-C']);

interface PnpmLine {
  /** Flags before the command or script: pnpm's own. */
  readonly own: readonly string[];
  /** The `--filter` package, when the line runs a package's script. */
  readonly filter: string | undefined;
  readonly command: string | undefined;
  /** Flags after the command: a script's own, or the pnpm command's. */
  readonly after: readonly string[];
}

function parsePnpm(words: readonly string[]): PnpmLine {
  const rest = words.slice(1);
  let filter: string | undefined;
  let index = 0;
  for (; index < rest.length; index += 1) {
    const word = rest[index] ?? '';
    if (!word.startsWith('-')) break;
    const flag = flagName(word);
    if (flag !== undefined && PNPM_VALUE_FLAGS.has(flag) && !word.includes('=')) {
      if (flag === '--filter' || flag === '-F') filter = rest[index + 1];
      index += 1;
    }
  }
  return {
    own: flagsOf(rest.slice(0, index)),
    filter,
    command: rest[index],
    after: flagsOf(rest.slice(index + 1)),
  };
}

describe("the guide's tally-kind lines, against tally-kind --help", () => {
  const lines = linesOf('node').filter(({ line }) => line.words[1] === TALLY_KIND);

  it('has tally-kind lines', () => {
    expect(lines.length).toBeGreaterThan(0);
  });

  for (const { page, line } of lines) {
    it(`${at(page, line.line)}: ${line.text}`, () => {
      const help = helpOf(process.execPath, [TALLY_KIND, '--help']);
      const commands = [...help.matchAll(/^ {2}([a-z]+) {2,}/gm)].map((match) => match[1]);
      expect(commands, help).toContain(line.words[2]);
      const flags = helpFlags(help);
      for (const flag of flagsOf(line.words.slice(3))) expect(flags, `tally-kind has no ${flag}`).toContain(flag);
    });
  }
});

describe("the guide's pnpm lines: scripts that exist, flags their --help lists", () => {
  const lines = linesOf('pnpm');
  const scripts = workspaceScripts();

  it('has pnpm lines', () => {
    expect(lines.length).toBeGreaterThan(0);
  });

  for (const { page, line } of lines) {
    it(`${at(page, line.line)}: ${line.text}`, () => {
      const parsed = parsePnpm(line.words);
      expect(parsed.command, 'a pnpm line names a command or script').toBeDefined();
      const command = parsed.command ?? '';
      if (parsed.filter !== undefined) {
        const known = scripts.get(parsed.filter);
        expect(known, `no workspace package is named ${parsed.filter}`).toBeDefined();
        expect(known, `${parsed.filter} has no script ${command}`).toContain(command);
        if (parsed.own.length > 0) {
          const own = helpFlags(helpOf('pnpm', ['run', '--help']));
          for (const flag of parsed.own) expect(own, `pnpm run has no ${flag}`).toContain(flag);
        }
        // A script is asked for its --help only when the line gives it flags (`image --help` would build).
        if (parsed.after.length > 0) {
          const flags = helpFlags(helpOf('pnpm', ['--filter', parsed.filter, command, '--help']));
          for (const flag of parsed.after) expect(flags, `${command} has no ${flag}`).toContain(flag);
        }
        return;
      }
      const flags = [...parsed.own, ...parsed.after];
      if (flags.length === 0) return;
      const known = helpFlags(helpOf('pnpm', [command, '--help']));
      for (const flag of flags) expect(known, `pnpm ${command} has no ${flag}`).toContain(flag);
    });
  }
});

/** kubectl's flags the guide gives a separate value (`-n tally-system`): that word is no subcommand. */
const KUBECTL_VALUE_FLAGS = new Set(['-n', '--namespace', '--kubeconfig', '--context', '-o', '--output', '-f', '-l']);

describe("the guide's kubectl tally lines, against kubectl-tally --help", () => {
  const lines = linesOf('kubectl').filter(({ line }) => line.words[1] === 'tally');

  it('has kubectl tally lines', () => {
    expect(lines.length).toBeGreaterThan(0);
  });

  for (const { page, line } of lines) {
    it(`${at(page, line.line)}: ${line.text}`, () => {
      const commands = [...helpOf(process.execPath, [KUBECTL_TALLY, '--help']).matchAll(/^ {2}([a-z]+) {1,}/gm)].map(
        (match) => match[1],
      );
      // `kubectl tally` and `kubectl tally --help` name no command: the plugin's own help answers for their flags.
      const command = line.words.slice(2).find((word) => !word.startsWith('-'));
      if (command !== undefined) expect(commands, `kubectl tally has no command ${command}`).toContain(command);
      const help = helpOf(process.execPath, [KUBECTL_TALLY, ...(command === undefined ? [] : [command]), '--help']);
      const flags = helpFlags(help);
      for (const flag of flagsOf(line.words.slice(2))) {
        expect(flags, `kubectl tally ${command ?? ''} has no ${flag}`).toContain(flag);
      }
    });
  }
});

describe("the guide's kubectl lines that name flags, against kubectl's --help", () => {
  const lines = linesOf('kubectl').filter(({ line }) => flagsOf(line.words).length > 0 && line.words[1] !== 'tally');
  let kubectl = '';
  let globalFlags = new Set<string>();

  beforeAll(async () => {
    kubectl = (await ensureKindBinaries((message) => console.error(`[tally-guide] ${message}`))).paths.kubectl;
    globalFlags = helpFlags(helpOf(kubectl, ['options']));
  }, 3_600_000);

  it('has kubectl lines with flags', () => {
    expect(lines.length).toBeGreaterThan(0);
  });

  for (const { page, line } of lines) {
    it(`${at(page, line.line)}: ${line.text}`, () => {
      const rest = line.words.slice(1);
      // cobra finds the deepest subcommand among the words that are not flags and ignores the arguments after it.
      const positional = rest.filter(
        (word, index) => !word.startsWith('-') && !KUBECTL_VALUE_FLAGS.has(rest[index - 1] ?? ''),
      );
      const flags = helpFlags(helpOf(kubectl, [...positional, '--help']));
      for (const flag of flagsOf(rest)) {
        expect(flags.has(flag) || globalFlags.has(flag), `kubectl ${rest[0]} has no ${flag}`).toBe(true);
      }
    });
  }
});

/**
 * Kubernetes serves an IPAddress of its own (`networking.k8s.io`, the addresses of Services), and kubectl resolves
 * `ipaddress`/`ipaddresses` to it before Cluster API's: a guide line that names the bare resource shows the reader
 * Service addresses, or NotFound. The lines of sh blocks and the `# kubectl …` lines heading an excerpt count.
 */
describe("the guide's kubectl lines name Cluster API's IPAddress with its group", () => {
  const BARE = new Set(['ipaddress', 'ipaddresses', 'ip']);
  const lines = guidePages().flatMap((page) =>
    page.blocks.flatMap((block) =>
      block.text.split('\n').flatMap((raw, index) => {
        const text = (block.lang === 'sh' ? raw : (/^#\s*(kubectl\s.*)$/.exec(raw)?.[1] ?? '')).trim();
        return text.startsWith('kubectl ') ? [{ page, line: block.line + 1 + index, text }] : [];
      }),
    ),
  );

  it('has kubectl lines', () => {
    expect(lines.length).toBeGreaterThan(0);
  });

  it.each(lines.map(({ page, line, text }) => [at(page, line), text] as const))('%s: %s', (_where, text) => {
    const resources = (text.split(/\s+/)[2] ?? '').split(',').map((word) => word.split('/')[0] ?? '');
    for (const resource of resources)
      expect(BARE.has(resource), `${text}: "${resource}" is networking.k8s.io's`).toBe(false);
  });
});

describe("the guide's pnpm version", () => {
  it("is the root package.json's packageManager wherever a page installs pnpm@<version>", () => {
    const root = z
      .object({ packageManager: z.string() })
      .parse(JSON.parse(readFileSync(join(REPOSITORY_ROOT, 'package.json'), 'utf8')));
    const named = guidePages().flatMap((page) =>
      [...page.text.matchAll(/\bpnpm@(\d[\w.-]*)/g)].map((match) => `${page.path}: pnpm@${match[1]}`),
    );
    expect(named.length, 'kind.md tells a reader without pnpm which one to install').toBeGreaterThan(0);
    for (const entry of named) expect(entry.replace(/^.*: /, ''), entry).toBe(root.packageManager);
  });
});
