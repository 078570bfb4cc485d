import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { appsVersion, type BuiltRelease, writeClusterctlRepository, writeStandInRepository } from '@tally-ipam/release';
import { ensureClusterctl } from '@tally-ipam/testenv';
import { parse, stringify } from 'yaml';
import { z } from 'zod';

/** How long one clusterctl command may run: move retries refused writes with backoffs of up to ~2 minutes. */
const CLUSTERCTL_TIMEOUT_MS = 15 * 60_000;

export interface ClusterctlRun {
  readonly args: readonly string[];
  readonly exitCode: number;
  /** stdout and stderr together (clusterctl logs its progress on stderr). */
  readonly output: string;
  readonly durationMs: number;
}

/**
 * The real clusterctl with a provider repository of its own: Cluster API's providers as stand-ins from the pinned
 * module (`@tally-ipam/release`: their CRDs, webhook settings, no Deployment) and Tally's two providers as this tree
 * renders them for a release, in a temporary HOME so no user configuration or cache takes part.
 */
export interface Clusterctl {
  /** The version of Tally's providers in the repository (`tally:v<version>`, `sim:v<version>`). */
  readonly version: string;
  /** `--core`, `--bootstrap`, `--control-plane`, `--ipam`, `--infrastructure` for `clusterctl init`. */
  readonly initArgs: readonly string[];
  /** The same, with Tally's providers at `version` (an earlier release of the repository). */
  initArgsAt(version: string): readonly string[];
  /** Runs clusterctl with `--config` set; never throws for a non-zero exit (the caller asserts on it). */
  run(args: readonly string[], env?: Readonly<Record<string, string>>): Promise<ClusterctlRun>;
}

const Providers = z.object({ providers: z.array(z.looseObject({ name: z.string() })) });

export interface PrepareClusterctlOptions {
  /** An earlier release whose providers the repository holds too (its own tree renders them), for upgrades. */
  readonly previous?: BuiltRelease;
  /** The version this tree's providers are published as; defaults to the apps' version. */
  readonly version?: string;
}

export async function prepareClusterctl(work: string, options: PrepareClusterctlOptions = {}): Promise<Clusterctl> {
  const version = options.version ?? appsVersion();
  const repository = join(work, 'repository');
  const standIn = await writeStandInRepository(repository);
  // Both releases side by side (`<provider>/v<version>/`): clusterctl lists a local repository's versions that way.
  if (options.previous) writeClusterctlRepository(repository, options.previous.version, options.previous.root);
  const ours = writeClusterctlRepository(repository, version);
  const config = join(work, 'clusterctl.yaml');
  writeFileSync(
    config,
    stringify({
      providers: [
        ...standIn.config.providers,
        ...Providers.parse(parse(readFileSync(ours.configPath, 'utf8'))).providers,
      ],
      'cert-manager': standIn.config['cert-manager'],
    }),
  );
  return clusterctlWithConfig({
    binary: (await ensureClusterctl()).path,
    work,
    config,
    version,
    standInArgs: standIn.initArgs,
  });
}

/** What a clusterctl runner is made of: plain data, so a vitest global setup can hand it to test files. */
export interface ClusterctlSetup {
  readonly binary: string;
  /** Its working directory; HOME is `<work>/home`, so no user configuration or cache takes part. */
  readonly work: string;
  /** The `--config` file: providers (file:// URLs) and the cert-manager setting. */
  readonly config: string;
  /** The version of Tally's providers `initArgs` installs. */
  readonly version: string;
  /** `--core`, `--bootstrap`, `--control-plane` for `clusterctl init`. */
  readonly standInArgs: readonly string[];
}

/** A clusterctl runner on an existing configuration (`prepareClusterctl`'s, or the kind lane's own repository). */
export function clusterctlWithConfig(setup: ClusterctlSetup): Clusterctl {
  const { binary, work, config, version, standInArgs } = setup;
  const home = join(work, 'home');
  mkdirSync(home, { recursive: true });
  const initArgsAt = (at: string): readonly string[] => [
    ...standInArgs,
    '--ipam',
    `tally:v${at}`,
    '--infrastructure',
    `sim:v${at}`,
  ];
  return {
    version,
    initArgs: initArgsAt(version),
    initArgsAt,
    run: (args, env = {}) =>
      new Promise((resolve) => {
        const started = performance.now();
        const all = [...args, '--config', config];
        execFile(
          binary,
          all,
          {
            cwd: work,
            timeout: CLUSTERCTL_TIMEOUT_MS,
            maxBuffer: 64 * 1024 * 1024,
            env: {
              PATH: process.env.PATH ?? '',
              HOME: home,
              XDG_CONFIG_HOME: join(home, '.config'),
              CLUSTERCTL_DISABLE_VERSIONCHECK: 'true',
              ...env,
            },
          },
          (error, stdout, stderr) => {
            const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
            resolve({
              args: all,
              exitCode: code,
              output: `${stdout}${stderr}${error && code === 1 && !stderr ? error.message : ''}`,
              durationMs: performance.now() - started,
            });
          },
        );
      }),
  };
}

/** Fails with clusterctl's whole output unless it exited 0. */
export function expectSuccess(run: ClusterctlRun): ClusterctlRun {
  if (run.exitCode !== 0) {
    throw new Error(`clusterctl ${run.args.join(' ')} exited ${run.exitCode}:\n${run.output}`);
  }
  return run;
}
