/**
 * `pnpm --filter @tally-ipam/e2e kind:repository`: what the lane does between creating its kind cluster and
 * `clusterctl init`, for a person trying Tally on a kind cluster of their own (docs/guide/kind.md): the Cluster API
 * manager's and both apps' images loaded into the cluster, and a clusterctl repository of this tree written — Cluster
 * API core, Tally and Sim rendered with those images, in the variant without cert-manager, the kubeadm providers and
 * cert-manager as stand-ins — with an `env.sh` that puts the clusterctl and kubectl it was written for on PATH.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ensureCapiManagerImageArchive, ensureKindBinaries, loadImageArchive } from '@tally-ipam/kind';
import { appsVersion } from '@tally-ipam/release';
import { renderCapiCoreComponents } from './capi-components.js';
import { laneRelease } from './lane.js';
import { archiveTag, LANE_PROVIDERS, onLaneNodes } from './providers.js';
import { laneCertificates, writeLaneRepository } from './repository.js';

const USAGE = `usage: pnpm --filter @tally-ipam/e2e kind:repository [--cluster NAME] --out DIR

Loads the Cluster API manager's image and both apps' images (built first with
"pnpm --filter @tally-ipam/ipam-controller image" and "pnpm --filter @tally-ipam/sim-infra-controller image")
into the kind cluster, and writes DIR/clusterctl.yaml, DIR/repository/ and DIR/env.sh for
"clusterctl init --config DIR/clusterctl.yaml --ipam tally --infrastructure sim --wait-providers".

  --cluster NAME  the kind cluster ("tally-kind create --name NAME"; default: tally)
  --out DIR       where the repository is written (relative to the directory pnpm was started in)
  -h, --help      this text`;

const log = (message: string): void => {
  console.error(`[kind:repository] ${message}`);
};

interface Options {
  readonly cluster: string;
  readonly out: string;
}

function flagValue(args: readonly string[], flag: string): string | undefined {
  const index = args.indexOf(flag);
  if (index === -1) return undefined;
  const value = args[index + 1];
  if (!value || value.startsWith('-')) throw new Error(`${flag} needs a value`);
  return value;
}

function parseOptions(args: readonly string[]): Options | undefined {
  if (args.includes('--help') || args.includes('-h')) return undefined;
  const known = new Set(['--cluster', '--out']);
  for (const [index, arg] of args.entries()) {
    const isValue = index > 0 && known.has(args[index - 1] ?? '');
    if (!isValue && !known.has(arg)) throw new Error(`unknown argument "${arg.slice(0, 50)}"\n${USAGE}`);
  }
  const out = flagValue(args, '--out');
  if (!out) throw new Error(`--out is required\n${USAGE}`);
  // pnpm runs the script in e2e/; a relative --out is the reader's, relative to where they typed the command.
  return { cluster: flagValue(args, '--cluster') ?? 'tally', out: resolve(process.env.INIT_CWD ?? process.cwd(), out) };
}

function builtArchive(provider: (typeof LANE_PROVIDERS)['ipam' | 'sim']): string {
  if (!existsSync(provider.imageArchive)) {
    const app = provider.app === 'ipam' ? 'ipam-controller' : 'sim-infra-controller';
    throw new Error(`${provider.imageArchive} does not exist: run "pnpm --filter @tally-ipam/${app} image" first`);
  }
  return archiveTag(provider.imageArchive);
}

async function main(args: readonly string[]): Promise<void> {
  const options = parseOptions(args);
  if (!options) {
    console.log(USAGE);
    return;
  }
  const images = { ipam: builtArchive(LANE_PROVIDERS.ipam), sim: builtArchive(LANE_PROVIDERS.sim) };
  // What `tally-kind create` built already (cache hits), without the node image: the cluster exists.
  const kind = await ensureKindBinaries(log);
  const capiManager = await ensureCapiManagerImageArchive(log);
  const cluster = { name: options.cluster, kindBinary: kind.paths.kind };
  for (const archive of [capiManager.archivePath, LANE_PROVIDERS.ipam.imageArchive, LANE_PROVIDERS.sim.imageArchive]) {
    log(`loading ${archive} into the kind cluster ${options.cluster}`);
    await loadImageArchive(cluster, archive);
  }
  // One node, named as kind names it: the Deployments stay there, off the Nodes Sim registers for its Machines.
  const nodes = [`${options.cluster}-control-plane`];
  const withoutCertManager = laneCertificates();
  const version = appsVersion();
  // Shipped replicas and variables: one IPAM replica, the Metal3 API off (its CRDs are not installed here).
  const release = await laneRelease(version, LANE_PROVIDERS, images, 1, nodes, withoutCertManager, {});
  const core = await withoutCertManager(onLaneNodes(await renderCapiCoreComponents(log), nodes));
  mkdirSync(options.out, { recursive: true });
  const setup = await writeLaneRepository(options.out, core, [release]);
  const env = resolve(options.out, 'env.sh');
  writeFileSync(env, `export PATH="${dirname(setup.binary)}:${dirname(kind.paths.kubectl)}:$PATH"\n`);
  log(`wrote ${setup.config} (Tally and Sim v${version}, images ${images.ipam}, ${images.sim})`);
  log(
    `next: source ${env} && clusterctl init --config ${setup.config} --ipam tally --infrastructure sim --wait-providers`,
  );
}

main(process.argv.slice(2)).catch((error: unknown) => {
  log(error instanceof Error ? error.message : String(error));
  process.exitCode = 1;
});
