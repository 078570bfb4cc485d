import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { controllerFlagsUsage } from '@tally-ipam/controller-kit';
import { readBenchTable } from '@tally-ipam/testenv';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { z } from 'zod';
import { helpFlags } from './support/clusterctl.js';
import { CONTROLLER_MAIN, guidePages, MANAGER_MANIFEST, REPOSITORY_ROOT } from './support/guide.js';
import { codeOf, type Page, parsePage, tableWithHeader } from './support/markdown.js';
import { referencePage, referencePages } from './support/readmes.js';

/**
 * What the READMEs state that the code knows, checked against the code: the apps' flag tables against their
 * `--help`, the Deployment's requests and limits against the shipped manifest, the IPAM provider's and the ledger's
 * test tables against their `test/` folders, every benchmark table between markers against the shape its bench
 * writes, and every link of the guide, the root README and the reference pages against the files of the repository.
 */

const SIM_CONTROLLER_MAIN = join(REPOSITORY_ROOT, 'apps/sim-infra-controller/dist/main.js');

function help(main: string): string {
  const run = spawnSync(process.execPath, [main, '--help'], { encoding: 'utf8', timeout: 60_000 });
  if (run.error) throw run.error;
  if (run.status !== 0) throw new Error(`${main} --help exited ${run.status}: ${run.stdout}${run.stderr}`);
  return run.stdout;
}

function flagsOfTable(page: Page): string[] {
  const table = tableWithHeader(page, 'flag', 'default');
  return table.rows.flatMap((row) => codeOf(row[0] ?? '').filter((code) => code.startsWith('-')));
}

describe("the apps' flag tables", () => {
  it.each([
    ['apps/ipam-controller/README.md', CONTROLLER_MAIN],
    ['apps/sim-infra-controller/README.md', SIM_CONTROLLER_MAIN],
  ])('%s lists exactly the flags of --help, each once', (path, main) => {
    const documented = flagsOfTable(referencePage(path));
    expect(new Set(documented).size, `${path}: a flag is listed twice`).toBe(documented.length);
    expect([...documented].sort()).toEqual([...helpFlags(help(main))].sort());
  });
});

describe("controller-kit's flag tables, against the usage text it gives every controller", () => {
  const usage = controllerFlagsUsage({
    name: 'docs',
    command: 'docs',
    description: 'the flags every controller of the kit has',
    leaderElectionId: 'docs-leader-election',
    webhookPurpose: 'admission',
  });
  const flags = [...helpFlags(usage)];

  it('packages/controller-kit/README.md lists exactly its flags, each once', () => {
    const documented = flagsOfTable(referencePage('packages/controller-kit/README.md'));
    expect(new Set(documented).size, 'a flag is listed twice').toBe(documented.length);
    expect([...documented].sort()).toEqual([...flags].sort());
  });

  it("docs/runtime.md lists exactly the manager's (the webhook server's are docs/webhooks.md's), each once", () => {
    const documented = flagsOfTable(referencePage('packages/controller-kit/docs/runtime.md'));
    expect(new Set(documented).size, 'a flag is listed twice').toBe(documented.length);
    const manager = flags.filter((flag) => !flag.startsWith('--webhook-') && flag !== '-h' && flag !== '--help');
    expect([...documented].sort()).toEqual(manager.sort());
  });
});

const Resources = z.object({
  requests: z.object({ cpu: z.string(), memory: z.string() }),
  limits: z.object({ cpu: z.string(), memory: z.string() }),
});
const Deployment = z.looseObject({
  kind: z.literal('Deployment'),
  spec: z.looseObject({
    template: z.looseObject({
      spec: z.looseObject({ containers: z.array(z.looseObject({ name: z.string(), resources: Resources })) }),
    }),
  }),
});

function shippedResources(): z.infer<typeof Resources> {
  const documents = parseAllDocuments(readFileSync(MANAGER_MANIFEST, 'utf8')).map((document) => document.toJS());
  const deployments = documents.flatMap((document) => {
    const parsed = Deployment.safeParse(document);
    return parsed.success ? [parsed.data] : [];
  });
  const container = deployments[0]?.spec.template.spec.containers.find((candidate) => candidate.name === 'manager');
  if (deployments.length !== 1 || !container)
    throw new Error(`${MANAGER_MANIFEST}: no Deployment with a manager container`);
  return container.resources;
}

describe("the Deployment's requests and limits, as the READMEs state them", () => {
  const { requests, limits } = shippedResources();

  it('config/README.md', () => {
    const text = referencePage('apps/ipam-controller/config/README.md').text;
    expect(text).toContain(`requests ${requests.cpu}/${requests.memory} and limits ${limits.cpu}/${limits.memory}`);
  });

  it("the app README's sizing", () => {
    const text = referencePage('apps/ipam-controller/README.md').text;
    expect(text).toContain(`asks for\n**${requests.memory}**`);
    expect(text).toContain(`limited to **${limits.memory}**`);
  });
});

describe("the IPAM provider's, the ledger's and the kubectl plugin's test tables", () => {
  it.each(['packages/ipam-provider', 'packages/ledger', 'packages/kubectl-tally'])(
    '%s: names every file of test/ that holds tests, once, and nothing else',
    (dir) => {
      const page = referencePage(`${dir}/README.md`);
      const named = tableWithHeader(page, 'file', 'covers').rows.flatMap((row) => codeOf(row[0] ?? ''));
      const files = readdirSync(join(REPOSITORY_ROOT, dir, 'test')).filter((name) => name.endsWith('.test.ts'));
      expect(new Set(named).size, 'a file is named twice').toBe(named.length);
      expect([...named].sort()).toEqual(files.sort());
    },
  );
});

describe("tools/docs' own test table", () => {
  it('names every file of its test/, once, and nothing else', () => {
    const page = referencePage('tools/docs/README.md');
    const named = tableWithHeader(page, 'test', 'checks').rows.flatMap((row) => codeOf(row[0] ?? ''));
    const files = readdirSync(join(REPOSITORY_ROOT, 'tools/docs/test')).filter((name) => name.endsWith('.test.ts'));
    expect(new Set(named).size, 'a file is named twice').toBe(named.length);
    expect([...named].sort()).toEqual(files.sort());
  });
});

const BENCH_MARKER = /<!-- bench:([a-z0-9][a-z0-9-]*):start -->/g;

describe('benchmark tables between markers', () => {
  const sections = referencePages().flatMap((page) =>
    [...page.text.matchAll(BENCH_MARKER)].map((match) => ({ page, name: match[1] ?? '' })),
  );

  it('the READMEs have some', () => {
    expect(sections.length).toBeGreaterThan(0);
  });

  it.each(sections.map(({ page, name }) => [page.path, name, page] as const))(
    '%s, bench:%s: one table, every row as wide as the header and saying when it was measured, written by a bench of the package',
    (path, name, page) => {
      const table = readBenchTable(page.text, name);
      expect(table, `${path}: bench:${name} has no end marker`).toBeDefined();
      if (!table) return;
      expect(table.caption.length, `${path}: bench:${name} has no caption`).toBeGreaterThan(0);
      expect(table.header.at(-1), `${path}: bench:${name}'s last column`).toBe('measured');
      expect(table.rows.length, `${path}: bench:${name} has no rows`).toBeGreaterThan(0);
      for (const row of table.rows) {
        expect(row.length, `${path}: bench:${name} row ${row[0]}`).toBe(table.header.length);
        expect(row.at(-1), `${path}: bench:${name} row ${row[0]}`).toMatch(/^\d{4}-\d{2}-\d{2}\b/);
      }
      const benchDir = join(REPOSITORY_ROOT, path.replace(/README\.md$/, ''), 'bench');
      expect(existsSync(benchDir), `${path}: no bench/ beside it`).toBe(true);
      const writers = readdirSync(benchDir).filter((file) =>
        readFileSync(join(benchDir, file), 'utf8').includes(`name: '${name}'`),
      );
      expect(writers, `${path}: no file of bench/ writes bench:${name}`).not.toEqual([]);
    },
  );
});

/** Markdown links `[text](target)` of the prose (fenced blocks left out), with their lines. */
function linksOf(page: Page): { target: string; line: number }[] {
  const links: { target: string; line: number }[] = [];
  let fence: string | undefined;
  page.text.split('\n').forEach((line, index) => {
    const opening = /^(`{3,}|~{3,})/.exec(line)?.[1];
    if (fence !== undefined) {
      if (opening !== undefined && line.trim() === fence) fence = undefined;
      return;
    }
    if (opening !== undefined) {
      fence = opening;
      return;
    }
    for (const match of line.matchAll(/\]\(([^)\s]+)\)/g)) links.push({ target: match[1] ?? '', line: index + 1 });
  });
  return links;
}

/** GitHub's anchors of a Markdown file's headings: lower case, punctuation dropped, spaces as hyphens. */
function anchorsOf(path: string): Set<string> {
  const anchors = new Set<string>();
  let fence = false;
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    if (/^(`{3,}|~{3,})/.test(line)) fence = !fence;
    const heading = fence ? null : /^#{1,6}\s+(.*)$/.exec(line);
    if (!heading) continue;
    const text = (heading[1] ?? '').trim().toLowerCase();
    anchors.add(text.replace(/[^\p{L}\p{N}_\- ]/gu, '').replace(/ /g, '-'));
  }
  return anchors;
}

describe('links', () => {
  const pages = [
    ...guidePages(),
    parsePage('README.md', readFileSync(join(REPOSITORY_ROOT, 'README.md'), 'utf8')),
    ...referencePages(),
  ];

  it.each(pages.map((page) => [page.path, page] as const))(
    '%s: every link names a file of the repository that exists, and a heading of it where it names one',
    (path, page) => {
      for (const { target, line } of linksOf(page)) {
        expect(target, `${path}:${line} points outside the repository`).not.toMatch(/^[a-z][a-z0-9+.-]*:/i);
        const [file = '', anchor] = target.split('#');
        const resolved = join(REPOSITORY_ROOT, file === '' ? path : join(dirname(path), file));
        expect(relative(REPOSITORY_ROOT, resolved), `${path}:${line}: ${target}`).not.toMatch(/^\.\./);
        expect(existsSync(resolved), `${path}:${line}: ${target} does not exist`).toBe(true);
        if (anchor !== undefined && existsSync(resolved) && resolved.endsWith('.md')) {
          expect(anchorsOf(resolved), `${path}:${line}: ${target} names no heading`).toContain(anchor);
        }
      }
    },
  );
});

/** Every README of the repository (nested ones too, e.g. `config/README.md`) and every page under `docs/`. */
function documentationPaths(): string[] {
  const listed = spawnSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '*.md'], {
    cwd: REPOSITORY_ROOT,
    encoding: 'utf8',
  });
  if (listed.status !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`);
  return listed.stdout
    .split('\n')
    .filter((path) => /(^|\/)README\.md$/.test(path) || path.startsWith('docs/'))
    .filter((path) => !path.startsWith('.changeset/') && !path.includes('node_modules/'))
    .filter((path) => existsSync(join(REPOSITORY_ROOT, path)))
    .sort();
}

/**
 * What a measurement diary leaves behind: a date, a commit hash, the machine's load, a numbered session. Figures
 * with their date belong in a bench's table between markers (written by the bench); history in git and the
 * CHANGELOGs.
 */
const DIARY: readonly { what: string; pattern: RegExp }[] = [
  { what: 'a date', pattern: /\b20\d\d-[01]\d(-[0-3]\d)?\b/ },
  { what: 'a commit hash', pattern: /\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b/ },
  { what: "the machine's load", pattern: /\bload (average )?\d/i },
  { what: 'a session', pattern: /\b(first|second|third|fourth|fifth|\d+(st|nd|rd|th)) session\b/i },
];

describe('no measurement diary in the READMEs and docs', () => {
  const paths = documentationPaths();

  it('finds the READMEs and docs', () => {
    expect(paths).toContain('README.md');
    expect(paths).toContain('docs/guide/README.md');
  });

  it.each(paths)('%s: no date, commit hash, load or session outside a bench table', (path) => {
    const text = readFileSync(join(REPOSITORY_ROOT, path), 'utf8').replace(
      /<!-- bench:([a-z0-9-]+):start -->[\s\S]*?<!-- bench:\1:end -->/g,
      // Kept as empty lines, so the lines named below are the file's.
      (table) => table.replace(/[^\n]/g, ''),
    );
    const found = text.split('\n').flatMap((line, index) =>
      DIARY.flatMap(({ what, pattern }) => {
        const match = pattern.exec(line);
        return match ? [`${path}:${index + 1}: ${what} (${match[0]})`] : [];
      }),
    );
    expect(found).toEqual([]);
  });
});

/** The repository's test files, as git lists them (tracked or new). */
function testFiles(): string[] {
  const listed = spawnSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '*.test.ts'], {
    cwd: REPOSITORY_ROOT,
    encoding: 'utf8',
  });
  if (listed.status !== 0) throw new Error(`git ls-files failed: ${listed.stderr}`);
  return listed.stdout.split('\n').filter((path) => path !== '' && existsSync(join(REPOSITORY_ROOT, path)));
}

/** `packages/ledger/README.md` → `packages/ledger/`; a page outside a package (docs/, the root README) → `''`. */
function packageDirOf(path: string): string {
  const match = /^((?:packages|apps|tools)\/[^/]+\/|e2e\/)/.exec(path);
  return match?.[1] ?? '';
}

describe('test files the READMEs and docs name', () => {
  const files = testFiles();

  it.each(documentationPaths())('%s: every `….test.ts` it names exists', (path) => {
    const text = readFileSync(join(REPOSITORY_ROOT, path), 'utf8');
    const named = new Set([...text.matchAll(/`([\w@./{}-]*?[\w-]+\.test\.ts)`/g)].map((match) => match[1] ?? ''));
    const scope = packageDirOf(path);
    const missing = [...named].filter((name) => {
      const relativeToPage = join(dirname(path), name);
      if (files.includes(relativeToPage) || files.includes(name)) return false;
      // A bare file name, or a path inside the package's folders (`test/x.test.ts`, `kind/test/x.test.ts`).
      return !files.some((file) => file.startsWith(scope) && file.endsWith(`/${name}`));
    });
    expect(missing).toEqual([]);
  });
});

describe("the library packages' READMEs", () => {
  const readmes = readdirSync(join(REPOSITORY_ROOT, 'packages'))
    .map((name) => `packages/${name}/README.md`)
    .filter((path) => existsSync(join(REPOSITORY_ROOT, path)));

  it.each(readmes)(
    '%s: an example of its API (type-checked by typescript.test.ts) and a link to its design',
    (path) => {
      const page = referencePage(path);
      expect(
        page.blocks.some((block) => block.lang === 'ts'),
        `${path} has no \`\`\`ts block`,
      ).toBe(true);
      expect(
        linksOf(page).some(({ target }) => target.includes('docs/design/')),
        `${path} links nowhere in docs/design/`,
      ).toBe(true);
    },
  );
});
