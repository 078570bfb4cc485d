import { spawnSync } from 'node:child_process';
import { describe, expect, inject, it } from 'vitest';
import { helpFlags } from './support/clusterctl.js';
import { flagName } from './support/commands.js';
import { managerContainer, readComponents } from './support/components.js';
import { CONTROLLER_MAIN, guidePage } from './support/guide.js';
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
    const variableFlags = new Set(['--log-level', '--concurrency', '--enable-metal3-ipam']);
    for (const arg of container.args) {
      if (variableFlags.has(flagName(arg) ?? '')) continue;
      expect(inline, `the page does not name ${arg}`).toContain(arg);
    }
    const { requests, limits } = container.resources;
    expect(page.text).toContain(`**${requests.cpu} CPU and ${requests.memory}**`);
    expect(page.text).toContain(`**${limits.cpu} and ${limits.memory}**`);
  });
});
