// docs/ holds the map of the repository: its generated sections match rules.ts, its links lead to files that
// exist, and nothing in the repository points at files outside it.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { generatedSections, withGeneratedSections } from '../src/doc.js';
import { ARCHITECTURE_DOC, WORKSPACE_ROOT } from '../src/paths.js';
import { KNOWN_EXCEPTIONS, PACKAGE_RULES } from '../src/rules.js';
import { readWorkspace } from '../src/scan.js';
import { filesUnder, packageDirs } from '../src/workspace.js';

const TEXT_FILE = /\.(?:md|ts|mts|mjs|js|json|ya?ml|sh)$|^Dockerfile$/;
/** The places of the workspace this repository was written in; the repository must stand alone. */
const OUTSIDE = /\/work\/(?:shared|wt|main)\b|\.\.\/shared\//;

describe('docs/ARCHITECTURE.md', () => {
  test('its generated sections say what src/rules.ts says (fix: pnpm --filter @tally-ipam/architecture gen-docs)', () => {
    const document = readFileSync(join(WORKSPACE_ROOT, ARCHITECTURE_DOC), 'utf8');
    const sections = generatedSections(
      { packages: PACKAGE_RULES, exceptions: KNOWN_EXCEPTIONS },
      packageDirs(WORKSPACE_ROOT),
      readWorkspace(WORKSPACE_ROOT),
    );
    expect(withGeneratedSections(document, sections)).toBe(document);
  });

  test('leads to the contract index and the design index', () => {
    const document = readFileSync(join(WORKSPACE_ROOT, ARCHITECTURE_DOC), 'utf8');
    expect(document).toContain('](contracts.md)');
    expect(document).toContain('](design/README.md)');
  });
});

/** The repository's files as git sees them (tracked, or new and not ignored): never builds or reports of a run. */
function repositoryFiles(): string[] {
  return execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: WORKSPACE_ROOT,
    encoding: 'utf8',
  })
    .split('\0')
    .filter((path) => path !== '');
}

describe('docs/ and every README', () => {
  test('every relative link leads to a file or folder of the repository', () => {
    const broken: string[] = [];
    const docs = filesUnder(join(WORKSPACE_ROOT, 'docs'), (name) => name.endsWith('.md'));
    expect(docs.length).toBeGreaterThanOrEqual(3);
    // Package READMEs link into docs/design/ since their rationale moved there; a moved section must not strand them.
    const markdown = repositoryFiles()
      .filter((path) => path.endsWith('.md') && !path.startsWith('docs/'))
      .map((path) => join(WORKSPACE_ROOT, path))
      .filter((file) => existsSync(file));
    expect(markdown.length).toBeGreaterThan(20);
    for (const doc of [...docs, ...markdown]) {
      const text = readFileSync(doc, 'utf8');
      for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = match[1]!.split('#')[0]!;
        if (target === '' || /^[a-z]+:/i.test(target)) continue;
        const resolved = join(dirname(doc), target);
        if (!existsSync(resolved) || !resolved.startsWith(WORKSPACE_ROOT)) {
          broken.push(`${relative(WORKSPACE_ROOT, doc)}: ${target}`);
        }
      }
    }
    expect(broken).toEqual([]);
  });
});

describe('the repository', () => {
  test('points at no file outside itself (no workspace paths, no ../shared)', () => {
    // Tracked files only: reports and builds written by the test run itself carry the machine's absolute paths.
    const tracked = repositoryFiles().filter((path) => TEXT_FILE.test(basename(path)) && path !== 'pnpm-lock.yaml');
    expect(tracked.length).toBeGreaterThan(300);
    const offenders: string[] = [];
    for (const path of tracked) {
      const file = join(WORKSPACE_ROOT, path);
      // This file names the pattern it looks for; a file deleted but not yet committed is not there to read.
      if (file === fileURLToPath(import.meta.url) || !existsSync(file)) continue;
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, index) => {
          if (OUTSIDE.test(line))
            offenders.push(`${relative(WORKSPACE_ROOT, file)}:${index + 1}: ${line.trim().slice(0, 80)}`);
        });
    }
    expect(offenders).toEqual([]);
  });
});

/** `pkg `file.test.ts › title`` spans of the "proved by" cells; a `› title` span continues the last file. */
interface CitedTest {
  row: string;
  packageName: string;
  file: string;
  title: string | undefined;
}

function citedTests(contracts: string): CitedTest[] {
  const cited: CitedTest[] = [];
  for (const line of contracts.split('\n')) {
    const row = /^\| ([ICMPX]\d+) \|/.exec(line)?.[1];
    if (row === undefined) continue;
    const provedBy = line.split(' | ')[3] ?? '';
    let packageName: string | undefined;
    let file: string | undefined;
    for (const match of provedBy.matchAll(/(?:([a-z0-9-]+) )?`([^`]+)`/g)) {
      if (match[1] !== undefined) packageName = match[1];
      const [path, title] = match[2]!.split(' › ') as [string, string | undefined];
      if (path.endsWith('.test.ts')) file = path;
      else if (path !== '' || title === undefined) continue;
      if (packageName === undefined || file === undefined) continue;
      cited.push({ row, packageName, file, title: title?.replace(/ …$/, '') });
    }
  }
  return cited;
}

describe('docs/contracts.md', () => {
  test('its summary counts its rows by status', () => {
    const contracts = readFileSync(join(WORKSPACE_ROOT, 'docs/contracts.md'), 'utf8');
    const statuses = contracts
      .split('\n')
      .filter((line) => /^\| [ICMPX]\d+ \|/.test(line))
      .map((line) => /^(done|partly|not implemented|not checkable)/.exec(line.split(' | ').at(-1) ?? '')?.[1] ?? line);
    const count = (status: string): number => statuses.filter((entry) => entry === status).length;
    const summary = /Summary: \*\*(\d+) rules\*\*: (\d+) done, (\d+) partly, (\d+) not implemented and (\d+) that/.exec(
      contracts.replace(/\n/g, ' '),
    );
    expect(summary?.slice(1).map(Number)).toEqual([
      statuses.length,
      count('done'),
      count('partly'),
      count('not implemented'),
      count('not checkable'),
    ]);
  });

  test('every test it cites exists under that name', () => {
    const contracts = readFileSync(join(WORKSPACE_ROOT, 'docs/contracts.md'), 'utf8');
    const dirsByShortName = new Map(
      [...packageDirs(WORKSPACE_ROOT)].map(([name, dir]) => [name.replace('@tally-ipam/', ''), dir]),
    );
    const cited = citedTests(contracts);
    expect(cited.length).toBeGreaterThan(60);
    const missing: string[] = [];
    for (const { row, packageName, file, title } of cited) {
      const dir = dirsByShortName.get(packageName);
      const path = dir === undefined ? undefined : join(WORKSPACE_ROOT, dir, 'test', file);
      if (path === undefined || !existsSync(path)) {
        missing.push(`${row}: ${packageName} test/${file} does not exist`);
      } else if (title !== undefined && !readFileSync(path, 'utf8').includes(title)) {
        missing.push(`${row}: ${packageName} test/${file} has no test named "${title}"`);
      }
    }
    expect(missing).toEqual([]);
  });
});
