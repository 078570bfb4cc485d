import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { appsVersion, writeClusterctlRepository } from '@tally-ipam/release';
import { ensureClusterctl } from '@tally-ipam/testenv';

/**
 * The real clusterctl (testenv builds it from the pinned Cluster API module) with the release's own clusterctl
 * repository of this tree (`@tally-ipam/release`): what the guide's install page tells a reader to use.
 */
export interface Clusterctl {
  readonly binary: string;
  /** HOME and XDG_CONFIG_HOME of every run: no ~/.cluster-api of the machine, no overrides but the guide's. */
  readonly home: string;
  /** The release's `clusterctl.yaml` (`file://` URLs into the repository). */
  readonly configPath: string;
  /** The repository's root: `<root>/ipam-tally/v<version>/ipam-components.yaml`. */
  readonly repositoryRoot: string;
  /** The components as released, variables unsubstituted. */
  readonly rawComponentsPath: string;
  readonly version: string;
}

export interface ClusterctlRun {
  readonly status: number;
  readonly output: string;
}

/** Builds (or finds in the cache) clusterctl and writes the release's repository under `work`. */
export async function prepareClusterctl(work: string): Promise<Clusterctl> {
  const version = appsVersion();
  const home = join(work, 'home');
  mkdirSync(join(home, '.config'), { recursive: true });
  const binary = (await ensureClusterctl()).path;
  const repository = writeClusterctlRepository(join(work, 'release'), version);
  return {
    binary,
    home,
    configPath: repository.configPath,
    repositoryRoot: join(work, 'release', 'clusterctl'),
    rawComponentsPath: repository.componentsPaths['ipam-tally'],
    version,
  };
}

/** Runs clusterctl; never throws for a non-zero exit (the caller asserts on it). */
export function runClusterctl(
  clusterctl: Clusterctl,
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
): ClusterctlRun {
  const environment: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: clusterctl.home,
    XDG_CONFIG_HOME: join(clusterctl.home, '.config'),
    CLUSTERCTL_DISABLE_VERSIONCHECK: 'true',
    ...env,
  };
  // Nothing here may reach a cluster: the guide's commands are checked, not run against the machine's kubeconfig.
  delete environment.KUBECONFIG;
  // The provider's variables come from the guide's configuration or `env`, never from the machine's environment.
  for (const name of Object.keys(environment)) {
    if (name.startsWith('TALLY_IPAM_') && !(name in env)) delete environment[name];
  }
  const run = spawnSync(clusterctl.binary, [...args], { env: environment, encoding: 'utf8', timeout: 120_000 });
  if (run.error) throw run.error;
  return { status: run.status ?? -1, output: `${run.stdout}${run.stderr}` };
}

/** The long and short flags a clusterctl (sub)command's `--help` lists, its global flags included. */
export function clusterctlFlags(clusterctl: Clusterctl, command: readonly string[]): Set<string> {
  const help = runClusterctl(clusterctl, [...command, '--help']);
  if (help.status !== 0)
    throw new Error(`clusterctl ${command.join(' ')} --help exited ${help.status}: ${help.output}`);
  return helpFlags(help.output);
}

/** Flags in a `--help` text: each line's leading `-x, --name` (cobra's and the controller's layout alike). */
export function helpFlags(help: string): Set<string> {
  const flags = new Set<string>();
  for (const line of help.split('\n')) {
    const match = /^\s+((?:-{1,2}[a-zA-Z0-9][a-zA-Z0-9-]*(?:\[[^\]]*\])?(?:,\s*)?)+)/.exec(line);
    if (!match) continue;
    for (const flag of (match[1] ?? '').matchAll(/-{1,2}[a-zA-Z0-9][a-zA-Z0-9-]*/g)) flags.add(flag[0]);
  }
  return flags;
}
