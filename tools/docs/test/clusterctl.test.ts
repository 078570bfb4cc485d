import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { stringify } from 'yaml';
import { type Clusterctl, clusterctlFlags, runClusterctl } from './support/clusterctl.js';
import { commandLines, flagName, subcommand } from './support/commands.js';
import { managerContainer, readComponents } from './support/components.js';
import { yamlBlocks } from './support/examples.js';
import { at, guidePage, guidePages } from './support/guide.js';
import { codeOf, tableWithHeader } from './support/markdown.js';

/**
 * The install page with the real clusterctl: each clusterctl configuration it prints, with its `file://` URLs pointed
 * at this tree's release repository, is read by `clusterctl generate provider`, which must render the image and the
 * arguments the page says; the variables table is what `--describe` lists; every clusterctl command line of the guide
 * names a subcommand and flags that clusterctl's `--help` lists.
 */

const IMAGE = 'ipam-controller';
const DEFAULT_REPOSITORY = 'ghcr.io/tally-ipam';

const work = mkdtempSync(join(tmpdir(), 'tally-guide-clusterctl-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The guide's `file:///<where you copied the release>/clusterctl/<provider>/…` URL, pointed at this tree's release. */
function localUrl(clusterctl: Clusterctl, url: string): string {
  const match = /^file:\/\/.*?\/clusterctl\/(.+)$/.exec(url);
  if (!match) throw new Error(`a provider url must be file://…/clusterctl/<provider>/v<version>/<file>, not ${url}`);
  return pathToFileURL(join(clusterctl.repositoryRoot, match[1] ?? '')).href;
}

interface ProviderEntry {
  name: string;
  type: string;
  url: string;
}

function providersOf(config: Readonly<Record<string, unknown>>): ProviderEntry[] {
  const providers = config.providers;
  if (!Array.isArray(providers)) return [];
  return providers as ProviderEntry[];
}

describe('the install page, checked with the real clusterctl', () => {
  const page = guidePage('install.md');
  const configs = yamlBlocks(page).flatMap((entry) => (entry.type === 'clusterctl' ? [entry] : []));

  it('prints clusterctl configurations', () => {
    expect(configs.length).toBeGreaterThan(0);
  });

  for (const { block, config } of configs) {
    it(`${at(page, block.line)}: clusterctl renders the components as the page says`, () => {
      const clusterctl = inject('tallyGuide').clusterctl;
      const providers = providersOf(config);
      expect(providers.map((provider) => `${provider.type}/${provider.name}`)).toEqual(['IPAMProvider/tally']);
      const entry = providers[0] as ProviderEntry;
      // The release the page names is this tree's: its version, its file layout.
      expect(entry.url).toContain(`/ipam-tally/v${clusterctl.version}/ipam-components.yaml`);
      const url = localUrl(clusterctl, entry.url);
      expect(existsSync(fileURLToPath(url)), url).toBe(true);
      const configPath = join(work, `clusterctl-${block.line}.yaml`);
      writeFileSync(configPath, stringify({ ...config, providers: [{ ...entry, url }] }));
      const out = join(work, `components-${block.line}.yaml`);
      const run = runClusterctl(clusterctl, [
        'generate',
        'provider',
        '--ipam',
        'tally',
        '--config',
        configPath,
        '--write-to',
        out,
      ]);
      expect(run.status, run.output).toBe(0);
      const container = managerContainer(readComponents(out));
      const images = config.images as Record<string, { repository?: string }> | undefined;
      const repository = images?.['ipam-tally']?.repository ?? DEFAULT_REPOSITORY;
      expect(container.image).toBe(`${repository}/${IMAGE}:v${clusterctl.version}`);
      // An image named in the prose after the block is the one clusterctl wrote.
      if (images) expect(page.inlineCode.map((code) => code.text)).toContain(container.image);
      // Each variable the block sets reaches its flag (the variables table says which).
      const table = tableWithHeader(page, 'variable', 'default', 'sets');
      for (const [name, value] of Object.entries(config).filter(([key]) => /^[A-Z]/.test(key))) {
        const row = table.rows.find((cells) => codeOf(cells[0] ?? '').includes(name));
        expect(row, `${name} is not in the variables table`).toBeDefined();
        const flag = codeOf(row?.[2] ?? '')[0] ?? '';
        expect(container.args).toContain(`${flag}=${String(value)}`);
        expect(page.inlineCode.map((code) => code.text)).toContain(`${flag}=${String(value)}`);
      }
    });
  }

  it("the variables table is the provider's variables, with their defaults and flags", () => {
    const clusterctl = inject('tallyGuide').clusterctl;
    const configPath = join(work, 'release-config.yaml');
    writeFileSync(
      configPath,
      stringify({
        providers: [{ name: 'tally', type: 'IPAMProvider', url: pathToFileURL(clusterctl.rawComponentsPath).href }],
      }),
    );
    const describe = runClusterctl(clusterctl, [
      'generate',
      'provider',
      '--ipam',
      'tally',
      '--config',
      configPath,
      '--describe',
    ]);
    expect(describe.status, describe.output).toBe(0);
    // `Variables:` and its `  - NAME` lines, up to the next heading (`Images:`).
    const after = describe.output.split('\n');
    const start = after.findIndex((line) => line.startsWith('Variables:'));
    expect(start, describe.output).toBeGreaterThanOrEqual(0);
    const listed: string[] = [];
    for (const line of after.slice(start + 1)) {
      if (!/^\s+- /.test(line)) break;
      listed.push(line.replace(/^\s+- /, '').trim());
    }
    const table = tableWithHeader(page, 'variable', 'default', 'sets');
    expect(table.rows.map((row) => codeOf(row[0] ?? '')[0]).sort()).toEqual([...listed].sort());
    const out = join(work, 'defaults.yaml');
    const rendered = runClusterctl(clusterctl, [
      'generate',
      'provider',
      '--ipam',
      'tally',
      '--config',
      configPath,
      '--write-to',
      out,
    ]);
    expect(rendered.status, rendered.output).toBe(0);
    const args = managerContainer(readComponents(out)).args;
    for (const row of table.rows) {
      const [fallback, flag] = [codeOf(row[1] ?? '')[0], codeOf(row[2] ?? '')[0]];
      expect(args, `${codeOf(row[0] ?? '')[0]}: default ${fallback} for ${flag}`).toContain(`${flag}=${fallback}`);
    }
  });
});

describe("the guide's clusterctl command lines, against clusterctl --help", () => {
  const lines = guidePages().flatMap((page) => commandLines(page, 'clusterctl').map((line) => ({ page, line })));

  it('has clusterctl command lines', () => {
    expect(lines.length).toBeGreaterThan(0);
  });

  for (const { page, line } of lines) {
    it(`${at(page, line.line)}: ${line.text}`, () => {
      const clusterctl = inject('tallyGuide').clusterctl;
      const command = subcommand(line);
      expect(command.length, 'a clusterctl line names a subcommand').toBeGreaterThan(0);
      const flags = clusterctlFlags(clusterctl, command);
      const used = line.words.slice(1).flatMap((word) => {
        const flag = flagName(word);
        return flag === undefined ? [] : [flag];
      });
      for (const flag of used) expect(flags, `clusterctl ${command.join(' ')} has no ${flag}`).toContain(flag);
    });
  }
});
