import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { readBenchTable } from '@tally-ipam/testenv';
import { describe, expect, inject, it } from 'vitest';
import { helpFlags } from './support/clusterctl.js';
import { flagName } from './support/commands.js';
import { managerContainer, readComponents } from './support/components.js';
import { CONTROLLER_MAIN, guidePage, REPOSITORY_ROOT } from './support/guide.js';
import { codeOf, tableWithHeader } from './support/markdown.js';

/**
 * The operating page against the controller itself: its flags table is exactly the flags `--help` lists, the
 * Deployment's arguments and resources it names are the ones the components ship.
 */

function controllerHelp(): string {
  const run = spawnSync(process.execPath, [CONTROLLER_MAIN, '--help'], { encoding: 'utf8', timeout: 60_000 });
  if (run.error) throw run.error;
  if (run.status !== 0) throw new Error(`--help exited ${run.status}: ${run.stdout}${run.stderr}`);
  return run.stdout;
}

describe('the operating page, against the controller and its Deployment', () => {
  const page = guidePage('operating.md');

  it('its flags table lists exactly the flags of --help', () => {
    const table = tableWithHeader(page, 'flag', 'default', 'what');
    const documented = table.rows.flatMap((row) => codeOf(row[0] ?? ''));
    expect(new Set(documented).size, 'a flag is listed twice').toBe(documented.length);
    expect([...documented].sort()).toEqual([...helpFlags(controllerHelp())].sort());
  });

  it("names every argument the Deployment sets, and the Deployment's resources", () => {
    const components = readComponents(inject('tallyGuide').componentsPath);
    const container = managerContainer(components);
    const inline = new Set(page.inlineCode.map((code) => code.text));
    // The clusterctl variables' arguments are documented on the install page with their defaults.
    const variableFlags = new Set(['--log-level', '--concurrency', '--enable-metal3-ipam', '--enable-in-cluster-ipam']);
    for (const arg of container.args) {
      if (variableFlags.has(flagName(arg) ?? '')) continue;
      expect(inline, `the page does not name ${arg}`).toContain(arg);
    }
    const { requests, limits } = container.resources;
    expect(page.text).toContain(`**${requests.cpu} CPU and ${requests.memory}**`);
    expect(page.text).toContain(`**${limits.cpu} and ${limits.memory}**`);
  });

  it("its sizing table quotes the benchmarks' tables as they stand, and the cache's cost per 50,000 claims from them", () => {
    const table = tableWithHeader(page, 'objects', 'memory', 'bench table', 'row', 'column');
    expect(table.rows.length).toBeGreaterThan(0);
    const quoted = new Map<string, number>();
    for (const row of table.rows) {
      const [, memory = '', bench = '', rowName = '', column = ''] = row;
      const link = /\[`([a-z0-9-]+)`\]\(([^)#]+)(?:#[^)]*)?\)/.exec(bench);
      expect(link, `${row[0]}: the bench table cell is not a link to a README`).not.toBeNull();
      const [, name = '', target = ''] = link ?? [];
      const readme = join(REPOSITORY_ROOT, dirname(page.path), target);
      const measured = readBenchTable(readFileSync(readme, 'utf8'), name);
      expect(measured, `${target} has no bench:${name} table`).toBeDefined();
      if (!measured) continue;
      const columnIndex = measured.header.map((cell) => cell.replace(/`/g, '')).indexOf(codeOf(column)[0] ?? '');
      expect(columnIndex, `bench:${name} has no column ${column}`).toBeGreaterThan(0);
      const measuredRow = measured.rows.find((candidate) => candidate[0] === codeOf(rowName)[0]);
      expect(measuredRow, `bench:${name} has no row ${rowName}`).toBeDefined();
      expect(codeOf(memory)[0], `${row[0]}`).toBe(measuredRow?.[columnIndex]);
      quoted.set(name, Number(codeOf(memory)[0]));
    }
    const perClaimKiB = quoted.get('cache-footprint');
    expect(perClaimKiB, 'the table quotes the cache footprint').toBeDefined();
    const per50k = Math.round(((perClaimKiB ?? 0) * 50_000) / 1024 / 10) * 10;
    expect(page.text).toContain(`about ${per50k} MiB per 50,000 claims`);
  });
});
